package actors

import (
	"context"
	"sync"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/messages"
)

// FrameStream is a spawned or attached command for plain-Go callers: its frames
// (*messages.Stdout, *messages.Stderr, then one *messages.Exit or
// *messages.Error) arrive on C, which closes after the terminal frame, or
// at once after Close. Reading C is what grants the command flow-control
// credit: a consumer that stops reading stops the command's reading too.
// A stream outlives its runtime's Shutdown with all it was owed: read C to
// its end, or Close the stream, to release it.
type FrameStream struct {
	rt        *Runtime
	sub       paddock.Subscription
	sessionID string
	out       chan messages.Frame
	bridge    *actor.PID
	closing   chan struct{}
	pumpDone  chan struct{}
	closeOnce sync.Once
}

// C delivers the frames in order.
func (s *FrameStream) C() <-chan messages.Frame { return s.out }

// Subscription is the reference of this subscription (for WriteStdin,
// StopCommand, ...).
func (s *FrameStream) Subscription() paddock.Subscription { return s.sub }

// SessionID is the session a spawn started or attached to ("" when the
// adapter made none).
func (s *FrameStream) SessionID() string { return s.sessionID }

// WriteStdin writes p to the command's stdin.
func (s *FrameStream) WriteStdin(ctx context.Context, p []byte) error {
	return s.rt.WriteStdin(ctx, s.sub, p)
}

// CloseStdin sends EOF to the command's stdin.
func (s *FrameStream) CloseStdin(ctx context.Context) error { return s.rt.CloseStdin(ctx, s.sub) }

// Close detaches locally (StopCommand): C closes without a terminal frame
// and the remote command keeps running. It is idempotent.
func (s *FrameStream) Close() error {
	s.closeOnce.Do(func() {
		close(s.closing)
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		_ = s.rt.StopCommand(ctx, s.sub)
		s.rt.engine.Poison(s.bridge)
		<-s.pumpDone
	})
	return nil
}

// delivery is a frame with the command actor that sent it.
type delivery struct {
	f    messages.Frame
	from *actor.PID
}

// bridgeActor is the owner actor of a plain-Go Stream: it queues the frames
// for the stream's pump goroutine, which hands them to the consumer and
// credits the command as they are taken.
type bridgeActor struct {
	rt       *Runtime
	queue    chan delivery
	pumpDone <-chan struct{}
	closed   bool
}

// Receive queues frames and finishes after the terminal one.
func (b *bridgeActor) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case messages.Frame:
		if b.closed {
			return
		}
		select {
		case b.queue <- delivery{f: m, from: c.Sender()}: // never waits while credits are honoured
		case <-b.pumpDone:
		}
		if messages.IsTerminal(m) {
			b.close()
			c.Engine().Poison(c.PID())
		}
	case actor.Stopped:
		b.close()
		b.rt.bridges.Delete(c.PID().ID)
	}
}

func (b *bridgeActor) close() {
	if !b.closed {
		b.closed = true
		close(b.queue)
	}
}

// newStreamBridge spawns a bridge and its pump; the caller sets cmd once
// the command exists.
func (rt *Runtime) newStreamBridge() *FrameStream {
	window := rt.cfg.Window
	queue := make(chan delivery, window+2)
	pumpDone := make(chan struct{})
	s := &FrameStream{rt: rt, out: make(chan messages.Frame), closing: make(chan struct{}), pumpDone: pumpDone}
	s.bridge = rt.engine.Spawn(func() actor.Receiver {
		return &bridgeActor{rt: rt, queue: queue, pumpDone: pumpDone}
	}, bridgeKind, append(rt.actorOpts(), actor.WithID(rt.newID()), actor.WithInboxSize(commandInbox))...)
	rt.bridges.Store(s.bridge.ID, s.bridge)
	// The pump is the stream's, not the runtime's: it ends once its
	// consumer has the terminal frame, or on Close, never on Shutdown.
	go func() {
		defer close(pumpDone)
		pump(rt.engine, queue, s.out, s.closing, window)
	}()
	return s
}

// pump hands queued frames to the consumer in order, credits the command
// for each half window taken, and closes out after the terminal frame, on
// Close, or when the bridge ends without one.
func pump(e *actor.Engine, queue <-chan delivery, out chan<- messages.Frame, closing <-chan struct{}, window int) {
	defer close(out)
	batch := uint32(max(window/2, 1))
	var owed uint32
	for d := range queue {
		select { // a closed stream hands nothing more over, even to a waiting reader
		case <-closing:
			return
		default:
		}
		select {
		case out <- d.f:
		case <-closing:
			return
		}
		if messages.IsTerminal(d.f) {
			return
		}
		if owed++; owed >= batch {
			e.Send(d.from, &messages.Credit{Ref: d.f.GetRef(), N: owed})
			owed = 0
		}
	}
}
