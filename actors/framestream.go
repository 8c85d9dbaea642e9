package actors

import (
	"context"
	"io"
	"sync"
	"sync/atomic"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
)

// FrameStream is a spawned, attached or watching subscription for plain-Go
// callers, as the runtime's Adapter returns it. Its frames
// (*messages.Stdout, *messages.Stderr or *messages.FileChange, then one
// *messages.Exit or *messages.Error) arrive on C, which closes after the
// terminal frame, or at once after Close; Next reads the same frames as
// events (read one or the other). Reading is what grants the command
// flow-control credit: a consumer that stops reading stops the command's
// reading too. A stream outlives its runtime's Shutdown with all it was
// owed: read it to its end, or Close it, to release it.
type FrameStream struct {
	client.Controls // stdin, signals and resizes of the subscription
	rt              *Runtime
	sub             paddock.Subscription
	sessionID       string
	sink            *streamSink
	out             chan messages.Frame
	done            bool // Next handed out the terminal event
	closed          atomic.Bool
	closing         chan struct{}
	pumpDone        chan struct{}
	closeOnce       sync.Once
}

var (
	_ paddock.Stream    = (*FrameStream)(nil)
	_ paddock.Signaller = (*FrameStream)(nil)
	_ paddock.Resizer   = (*FrameStream)(nil)
)

// C delivers the frames in order.
func (s *FrameStream) C() <-chan messages.Frame { return s.out }

// Next returns the next frame as an event; io.EOF after the terminal one
// or a Close.
func (s *FrameStream) Next(ctx context.Context) (paddock.Event, error) {
	if s.done || s.closed.Load() {
		return paddock.Event{}, io.EOF
	}
	select {
	case f, ok := <-s.out:
		if !ok || s.closed.Load() {
			s.done = true
			return paddock.Event{}, io.EOF
		}
		ev := wire.EventOf(f)
		s.done = ev.Kind.Terminal()
		return ev, nil
	case <-ctx.Done():
		return paddock.Event{}, ctx.Err()
	}
}

// Subscription is the reference of this subscription, as frames and
// requests of package messages name it.
func (s *FrameStream) Subscription() paddock.Subscription { return s.sub }

// SessionID is the session a spawn started or attached to ("" when the
// adapter made none).
func (s *FrameStream) SessionID() string { return s.sessionID }

// Close detaches locally (StopCommand): C closes without a terminal frame
// and the remote command keeps running. It is idempotent.
func (s *FrameStream) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		close(s.closing)
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		_ = s.Stop(ctx)
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
	s.Controls = client.Controls{T: rt.Transport(), Ref: func(context.Context) (*messages.CommandRef, error) {
		return wire.CommandMessage(s.sub), nil // set before the stream is handed out
	}}
	rt.sinks.Store(sink.owner.ID, sink)
	// The pump is the stream's, not the runtime's: it ends once its
	// consumer has the terminal frame, or on Close, never on Shutdown. Its
	// end releases the sink, so a stream read to its end costs nothing
	// more, Closed or not.
	go func() {
		defer close(pumpDone)
		defer rt.sinks.Delete(sink.owner.ID)
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
