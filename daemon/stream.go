package daemon

import (
	"context"
	"io"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
)

// streamWindow is how many events a stream holds that its reader has not
// taken; beyond, the stream stops reading and HTTP/2 holds the server.
const streamWindow = 64

// Open sends q (a SpawnRequest, AttachRequest or WatchRequest) and
// returns its stream once the reply came; ctx bounds the reply only.
func (t *Transport) Open(ctx context.Context, q client.Request) (paddock.Stream, client.Reply, error) {
	in, first, cancel, failed, err := t.serverStream(ctx, q)
	if failed != nil || err != nil {
		return nil, failed, err
	}
	var (
		reply client.Reply
		ref   *messages.CommandRef
		sid   string
	)
	switch r := first.(*messages.StreamItem).GetItem().(type) {
	case *messages.StreamItem_Spawn:
		reply, ref, sid = r.Spawn, r.Spawn.GetCommand(), r.Spawn.GetSessionId()
	case *messages.StreamItem_Attach:
		reply, ref = r.Attach, r.Attach.GetCommand()
		sid = q.(*messages.AttachRequest).GetSessionId()
	case *messages.StreamItem_Watch:
		reply, ref = r.Watch, r.Watch.GetCommand()
	default:
		cancel()
		_ = in.Close()
		return nil, nil, &paddock.UnavailableError{Detail: "daemon: the stream's first message is not its reply"}
	}
	if reply.GetFailure() != nil {
		cancel()
		_ = in.Close()
		return nil, reply, nil
	}
	s := &stream{in: in, cancel: cancel, events: make(chan paddock.Event, streamWindow),
		done: make(chan struct{}), stop: make(chan struct{}), session: sid}
	s.Controls = client.Controls{T: t, Ref: func(context.Context) (*messages.CommandRef, error) { return ref, nil }}
	go s.receive()
	return s, reply, nil
}

// stream is a subscription's events as the server sends them.
type stream struct {
	client.Controls // stdin, signals and resizes of the subscription
	in              *connect.ServerStreamForClient[holder]
	cancel          context.CancelFunc
	events          chan paddock.Event // closed after the terminal event, or on Close
	done            chan struct{}      // closed once receive returned
	stop            chan struct{}      // closed by Close
	session         string

	mu     sync.Mutex
	closed bool
}

// receive turns the server's frames into events until the terminal one;
// a stream that ends before it ends with an error event (never a made-up
// exit).
func (s *stream) receive() {
	defer close(s.done)
	defer func() { _ = s.in.Close() }()
	defer close(s.events)
	for s.in.Receive() {
		frames := s.in.Msg().m.(*messages.StreamItem).GetFrames().GetFrames()
		for _, f := range frames {
			ev := eventOf(f)
			select {
			case s.events <- ev:
			case <-s.closing():
				return
			}
			if ev.Kind.Terminal() {
				return
			}
		}
	}
	if s.isClosed() {
		return
	}
	detail := paddock.DetailClosedBeforeExit
	if err := s.in.Err(); err != nil {
		detail += ": " + err.Error()
	}
	select {
	case s.events <- paddock.Failed(&paddock.UnavailableError{Detail: detail}):
	case <-s.closing():
	}
}

// eventOf is the event of a frame of the service.
func eventOf(a *messages.AnyFrame) paddock.Event {
	if f := frameIn(a); f != nil {
		return wire.EventOf(f)
	}
	return paddock.Failed(&paddock.UnavailableError{Detail: "daemon: an unknown frame"})
}

// closing is done once the stream is closed.
func (s *stream) closing() <-chan struct{} { return s.stop }

func (s *stream) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Next returns the next event; io.EOF after the terminal one or Close.
func (s *stream) Next(ctx context.Context) (paddock.Event, error) {
	if s.isClosed() {
		return paddock.Event{}, io.EOF
	}
	select {
	case ev, ok := <-s.events:
		if !ok || s.isClosed() {
			return paddock.Event{}, io.EOF
		}
		return ev, nil
	case <-ctx.Done():
		return paddock.Event{}, ctx.Err()
	}
}

// SessionID is the session the stream follows, or "".
func (s *stream) SessionID() string { return s.session }

// Close detaches the stream: its subscription is stopped (StopCommand,
// before Close returns, so the command's controls answer command_exited
// from then on), the server's stream ends, the command goes on.
func (s *stream) Close() error {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if !already {
		close(s.stop)
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		_ = s.Stop(ctx)
		cancel()
		s.cancel()
		<-s.done
	}
	return nil
}

// stopTimeout bounds Close's StopCommand.
const stopTimeout = 10 * time.Second
