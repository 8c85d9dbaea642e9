// Package eventq is the read-ahead queue between the goroutine that reads
// a command's transport and the caller of paddock.Stream.Next: bounded (a
// slow caller backs the transport up), ended by a local detach (Close),
// and handing out nothing after the terminal event.
package eventq

import (
	"context"
	"io"
	"sync"

	"github.com/paddockhq/paddock"
)

// Queue holds events read ahead of Next. Emit is for the reader
// goroutine; Next for one caller at a time, as Stream.Next is.
type Queue struct {
	events   chan paddock.Event
	done     chan struct{}
	once     sync.Once
	finished bool // Next handed out the terminal event
}

// New returns a queue holding up to size events.
func New(size int) *Queue {
	return &Queue{events: make(chan paddock.Event, size), done: make(chan struct{})}
}

// Emit queues ev, waiting for room; it gives up (false) once the queue is
// closed.
func (q *Queue) Emit(ev paddock.Event) bool {
	select {
	case q.events <- ev:
		return true
	case <-q.done:
		return false
	}
}

// Next returns the next event; io.EOF after the terminal event or Close.
func (q *Queue) Next(ctx context.Context) (paddock.Event, error) {
	if q.finished || q.Closed() {
		return paddock.Event{}, io.EOF
	}
	select {
	case ev := <-q.events:
		q.finished = ev.Kind.Terminal()
		return ev, nil
	case <-q.done:
		return paddock.Event{}, io.EOF
	case <-ctx.Done():
		return paddock.Event{}, ctx.Err()
	}
}

// TryNext returns a queued event without waiting (and without marking the
// end): for a caller that must look before the stream is handed out.
func (q *Queue) TryNext() (paddock.Event, bool) {
	select {
	case ev := <-q.events:
		return ev, true
	default:
		return paddock.Event{}, false
	}
}

// Close detaches: Emit gives up, Next answers io.EOF. It reports whether
// this call closed it (false if it was closed already).
func (q *Queue) Close() bool {
	closed := false
	q.once.Do(func() { close(q.done); closed = true })
	return closed
}

// Closed reports whether Close was called.
func (q *Queue) Closed() bool {
	select {
	case <-q.done:
		return true
	default:
		return false
	}
}

// Done is closed by Close.
func (q *Queue) Done() <-chan struct{} { return q.done }
