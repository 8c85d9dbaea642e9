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
	sink      *streamSink
	out       chan messages.Frame
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

// Signal delivers sig to the command.
func (s *FrameStream) Signal(ctx context.Context, sig paddock.Signal) error {
	return s.rt.Signal(ctx, s.sub, sig)
}

// Resize sets the command's terminal size.
func (s *FrameStream) Resize(ctx context.Context, size paddock.TermSize) error {
	return s.rt.Resize(ctx, s.sub, size)
}

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
		s.release()
		<-s.pumpDone
	})
	return nil
}

// release forgets the stream's sink and ends its queue.
func (s *FrameStream) release() {
	s.rt.sinks.Delete(s.sink.owner.ID)
	s.sink.close()
}

// delivery is a frame with the command actor that sent it.
type delivery struct {
	f    messages.Frame
	from *actor.PID
}

// streamSink is where a plain-Go stream's command puts its frames: a queue
// the stream's pump hands to the consumer. Its owner PID names the stream
// in the actor protocol (it is never spawned: the command pushes here
// directly instead of sending). Credits bound the queue: a command has at
// most a window of output frames plus its terminal frame in it, so a push
// never waits.
type streamSink struct {
	owner    *actor.PID
	queue    chan delivery
	pumpDone <-chan struct{}

	mu     sync.Mutex
	closed bool
}

// push queues d; after a terminal frame, or once closed, the queue ends.
func (k *streamSink) push(d delivery) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return
	}
	select {
	case k.queue <- d:
	case <-k.pumpDone: // the stream was closed: nobody takes frames any more
	}
	if messages.IsTerminal(d.f) {
		k.closed = true
		close(k.queue)
	}
}

// close ends the queue: the pump closes C once it has handed over what the
// queue holds.
func (k *streamSink) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.closed {
		k.closed = true
		close(k.queue)
	}
}

// sinkOf is the local stream sink owner names, or nil for an actor.
func (rt *Runtime) sinkOf(owner *actor.PID) *streamSink {
	if owner == nil || owner.Address != rt.engine.Address() {
		return nil
	}
	if v, ok := rt.sinks.Load(owner.ID); ok {
		return v.(*streamSink)
	}
	return nil
}

// newFrameStream makes a stream and starts its pump; the caller sets sub
// once the command exists.
func (rt *Runtime) newFrameStream() *FrameStream {
	window := rt.cfg.Window
	pumpDone := make(chan struct{})
	sink := &streamSink{
		owner:    actor.NewPID(rt.engine.Address(), streamKind+"/"+rt.newID()),
		queue:    make(chan delivery, window+2),
		pumpDone: pumpDone,
	}
	s := &FrameStream{rt: rt, sink: sink, out: make(chan messages.Frame), closing: make(chan struct{}), pumpDone: pumpDone}
	rt.sinks.Store(sink.owner.ID, sink)
	// The pump is the stream's, not the runtime's: it ends once its
	// consumer has the terminal frame, or on Close, never on Shutdown.
	go func() {
		defer close(pumpDone)
		pump(rt.engine, sink.queue, s.out, s.closing, window)
	}()
	return s
}

// pump hands queued frames to the consumer in order, credits the command
// as the credit rule says, and closes out after the terminal frame, on
// Close, or when the queue ends without one.
func pump(e *actor.Engine, queue <-chan delivery, out chan<- messages.Frame, closing <-chan struct{}, window int) {
	defer close(out)
	credit := newCreditBatch(window)
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
		if n := credit.consume(); n > 0 {
			e.Send(d.from, &messages.Credit{Ref: d.f.GetRef(), N: n})
		}
	}
}
