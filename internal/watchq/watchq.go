// Package watchq holds a watch's changes for its reader: the queue every
// adapter's watch fills (docs/contract.md#op-watch). It is bounded
// (paddock.MaxWatchBacklog, past which the watch ends with
// unavailable(watch_overflow)), merges consecutive writes to one file that
// the reader has not taken yet, hands over what it holds before the error
// that ended it, and answers io.EOF once closed.
package watchq

import (
	"context"
	"io"
	"sync"

	"github.com/paddockhq/paddock"
)

// Queue is one watch's changes. Push and End come from the producer;
// Next from one reader; Close from anyone.
type Queue struct {
	mu     sync.Mutex
	events []paddock.FileEvent
	end    error // set by End: returned once the queue is drained
	closed bool
	wake   chan struct{} // a one-slot signal to the reader
	done   chan struct{} // closed by End or Close: the producer stops
	once   sync.Once
	limit  int
}

// New returns an empty queue holding at most paddock.MaxWatchBacklog
// changes.
func New() *Queue { return NewWithLimit(paddock.MaxWatchBacklog) }

// NewWithLimit returns an empty queue holding at most limit changes.
func NewWithLimit(limit int) *Queue {
	return &Queue{wake: make(chan struct{}, 1), done: make(chan struct{}), limit: limit}
}

// Push queues ev; it reports false once the queue has ended (the producer
// stops). Past the limit the queue ends with ErrWatchOverflow.
func (q *Queue) Push(ev paddock.FileEvent) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || q.end != nil {
		return false
	}
	if n := len(q.events); n > 0 && ev.Change == paddock.FileWritten && q.events[n-1] == ev {
		return true // a write the reader has not taken yet already says so
	}
	if len(q.events) >= q.limit {
		q.endLocked(paddock.ErrWatchOverflow)
		return false
	}
	q.events = append(q.events, ev)
	q.signal()
	return true
}

// End ends the watch with err after what the queue holds.
func (q *Queue) End(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || q.end != nil {
		return
	}
	q.endLocked(err)
}

func (q *Queue) endLocked(err error) {
	q.end = err
	q.once.Do(func() { close(q.done) })
	q.signal()
}

// Close ends the watch for its reader: Next answers io.EOF from now on.
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.events = nil
	q.once.Do(func() { close(q.done) })
	q.signal()
}

// Done is closed once the watch ended or was closed: its producer stops.
func (q *Queue) Done() <-chan struct{} { return q.done }

func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Next returns the next change; after them the error that ended the watch,
// or io.EOF once closed.
func (q *Queue) Next(ctx context.Context) (paddock.FileEvent, error) {
	for {
		q.mu.Lock()
		switch {
		case q.closed:
			q.mu.Unlock()
			return paddock.FileEvent{}, io.EOF
		case len(q.events) > 0:
			ev := q.events[0]
			q.events[0] = paddock.FileEvent{}
			q.events = q.events[1:]
			q.mu.Unlock()
			return ev, nil
		case q.end != nil:
			err := q.end
			q.mu.Unlock()
			return paddock.FileEvent{}, err
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-ctx.Done():
			return paddock.FileEvent{}, ctx.Err()
		}
	}
}
