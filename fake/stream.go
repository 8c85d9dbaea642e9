package fake

import (
	"context"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/pending"
)

// stream is one subscription to a session: a queue of the events meant
// for it, unbounded (a script's output is as long as its script).
type stream struct {
	sess      *session
	sessionID string
	queue     *pending.Queue[paddock.Event]
}

var _ paddock.Stream = (*stream)(nil)

func newStream(s *session, sessionID string) *stream {
	return &stream{sess: s, sessionID: sessionID, queue: pending.New(func(ev paddock.Event) bool { return ev.Kind.Terminal() })}
}

// push queues ev; after Close it is dropped.
func (st *stream) push(ev paddock.Event) { st.queue.Push(ev) }

// Next returns the next queued event; io.EOF after the terminal event or
// after Close.
func (st *stream) Next(ctx context.Context) (paddock.Event, error) { return st.queue.Next(ctx) }

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
	st.queue.Close()
	return nil
}

// SessionID is the session this stream follows.
func (st *stream) SessionID() string { return st.sessionID }
