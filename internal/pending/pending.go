// Package pending is the queue of a stream's events waiting for Next, for
// the streams whose producer must never block (an actor's Receive, a
// script): Push always returns at once, so the producer has to be bounded
// some other way (a command's credit window bounds what it sends), Next
// waits for the next one, and after the terminal event or Close the
// stream is over.
package pending

import (
	"context"
	"io"
	"sync"
)

// Queue holds the items pushed and not yet taken, in order. Push may be
// called from any goroutine; Next from one at a time, as Stream.Next is.
type Queue[T any] struct {
	terminal func(T) bool // the item that ends the stream

	mu       sync.Mutex
	items    []T
	finished bool          // the terminal item was taken
	closed   bool          // detached locally
	ready    chan struct{} // poked on push and close (capacity 1)
}

// New returns an empty queue whose stream ends with the item terminal
// reports.
func New[T any](terminal func(T) bool) *Queue[T] {
	return &Queue[T]{terminal: terminal, ready: make(chan struct{}, 1)}
}

// Push queues v; after Close (or once the terminal item was queued and
// taken) it is dropped, and Push reports false.
func (q *Queue[T]) Push(v T) bool {
	q.mu.Lock()
	ok := !q.closed && !q.finished
	if ok {
		q.items = append(q.items, v)
	}
	q.mu.Unlock()
	q.poke()
	return ok
}

func (q *Queue[T]) poke() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// Next takes the next item, waiting for one; io.EOF after the terminal
// item or after Close, and ctx's error if ctx ends first.
func (q *Queue[T]) Next(ctx context.Context) (T, error) {
	var zero T
	for {
		q.mu.Lock()
		if q.closed || q.finished {
			q.mu.Unlock()
			return zero, io.EOF
		}
		if len(q.items) > 0 {
			v := q.items[0]
			q.items[0] = zero
			q.items = q.items[1:]
			q.finished = q.terminal(v)
			q.mu.Unlock()
			return v, nil
		}
		q.mu.Unlock()
		select {
		case <-q.ready:
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
}

// Close detaches: what is queued is dropped, Push drops from now on, and
// Next answers io.EOF. It reports whether this call closed the queue.
func (q *Queue[T]) Close() bool {
	q.mu.Lock()
	first := !q.closed
	q.closed, q.items = true, nil
	q.mu.Unlock()
	q.poke()
	return first
}

// Closed reports whether Close was called.
func (q *Queue[T]) Closed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}
