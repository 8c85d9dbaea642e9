package fake

import (
	"context"
	"io"
	"sync"

	"github.com/paddockhq/paddock"
)

// stream is one subscription to a session: an unbounded in-memory queue of
// the events meant for it.
type stream struct {
	sess      *session
	sessionID string

	mu       sync.Mutex
	queue    []paddock.Event
	finished bool          // the terminal event was handed out
	closed   bool          // detached locally
	ready    chan struct{} // poked on push and close (capacity 1)
}

var _ paddock.Stream = (*stream)(nil)

func newStream(s *session, sessionID string) *stream {
	return &stream{sess: s, sessionID: sessionID, ready: make(chan struct{}, 1)}
}

// push queues ev; after Close it is dropped.
func (st *stream) push(ev paddock.Event) {
	st.mu.Lock()
	if !st.closed {
		st.queue = append(st.queue, ev)
	}
	st.mu.Unlock()
	st.poke()
}

func (st *stream) poke() {
	select {
	case st.ready <- struct{}{}:
	default:
	}
}

// Next returns the next queued event; io.EOF after the terminal event or
// after Close.
func (st *stream) Next(ctx context.Context) (paddock.Event, error) {
	for {
		st.mu.Lock()
		if st.closed || st.finished {
			st.mu.Unlock()
			return paddock.Event{}, io.EOF
		}
		if len(st.queue) > 0 {
			ev := st.queue[0]
			st.queue = st.queue[1:]
			st.finished = ev.Kind.Terminal()
			st.mu.Unlock()
			return ev, nil
		}
		st.mu.Unlock()
		select {
		case <-st.ready:
		case <-ctx.Done():
			return paddock.Event{}, ctx.Err()
		}
	}
}

// WriteStdin delivers p while the command lives and this stream is
// subscribed; otherwise ErrCommandExited.
func (st *stream) WriteStdin(_ context.Context, p []byte) error {
	return st.sess.writeStdin(st, p)
}

// CloseStdin sends EOF while this stream is subscribed (ok even after the
// command ended); once detached, ErrCommandExited.
func (st *stream) CloseStdin(context.Context) error { return st.sess.closeStdin(st) }

// Close detaches this stream; the command keeps running.
func (st *stream) Close() error {
	st.sess.unsubscribe(st)
	st.mu.Lock()
	st.closed = true
	st.queue = nil
	st.mu.Unlock()
	st.poke()
	return nil
}

// SessionID is the session this stream follows.
func (st *stream) SessionID() string { return st.sessionID }
