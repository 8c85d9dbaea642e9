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
// reading too. A stream read with Next costs no goroutine of its own; C
// starts one on its first call, which hands the frames over. A stream
// outlives its runtime's Shutdown with all it was owed: read it to its end,
// or Close it, to release it.
type FrameStream struct {
	client.Controls // stdin, signals and resizes of the subscription
	rt              *Runtime
	sub             paddock.Subscription
	sessionID       string
	sink            *streamSink
	credit          creditBatch // of the frames taken from the sink
	done            bool        // Next handed out the terminal event
	closed          atomic.Bool
	closing         chan struct{}
	closeOnce       sync.Once

	pumpOnce sync.Once
	pumping  atomic.Bool         // C was called: its pump takes the frames
	out      chan messages.Frame // C, once the pump runs
	pumpDone chan struct{}       // closed when the pump returns
}

var (
	_ paddock.Stream    = (*FrameStream)(nil)
	_ paddock.Signaller = (*FrameStream)(nil)
	_ paddock.Resizer   = (*FrameStream)(nil)
)

// C delivers the frames in order; its first call starts the goroutine that
// hands them over.
func (s *FrameStream) C() <-chan messages.Frame {
	s.pumpOnce.Do(func() {
		s.out, s.pumpDone = make(chan messages.Frame), make(chan struct{})
		s.pumping.Store(true)
		go func() {
			defer close(s.pumpDone)
			s.pump()
		}()
	})
	return s.out
}

// Next returns the next frame as an event; io.EOF after the terminal one
// or a Close.
func (s *FrameStream) Next(ctx context.Context) (paddock.Event, error) {
	if s.done || s.closed.Load() {
		return paddock.Event{}, io.EOF
	}
	var f messages.Frame
	if s.pumping.Load() {
		select {
		case got, ok := <-s.out:
			if !ok {
				s.done = true
				return paddock.Event{}, io.EOF
			}
			f = got
		case <-ctx.Done():
			return paddock.Event{}, ctx.Err()
		}
	} else {
		got, ok, err := s.take(ctx)
		if err != nil {
			return paddock.Event{}, err
		}
		if !ok {
			s.done = true
			return paddock.Event{}, io.EOF
		}
		f = got
	}
	if s.closed.Load() {
		s.done = true
		return paddock.Event{}, io.EOF
	}
	ev := wire.EventOf(f)
	s.done = ev.Kind.Terminal()
	return ev, nil
}

// take takes the next frame from the sink and grants the command credit as
// the credit rule says; ok is false once the sink has ended and holds
// nothing more, or the stream was closed (and the sink is let go then).
func (s *FrameStream) take(ctx context.Context) (messages.Frame, bool, error) {
	d, ok, err := s.sink.take(ctx, s.closing)
	if err != nil {
		return nil, false, err
	}
	if !ok || messages.IsTerminal(d.f) {
		s.rt.sinks.Delete(s.sink.owner.ID) // a stream read to its end costs nothing more
	}
	if !ok {
		return nil, false, nil
	}
	if !messages.IsTerminal(d.f) {
		if n := s.credit.consume(); n > 0 {
			s.rt.engine.Send(d.from, &messages.Credit{Ref: d.f.GetRef(), N: n})
		}
	}
	return d.f, true, nil
}

// pump hands the frames to C in order, and closes C after the terminal
// frame, on Close, or when the sink ends without one.
func (s *FrameStream) pump() {
	defer close(s.out)
	for {
		f, ok, _ := s.take(context.Background())
		if !ok {
			return
		}
		select { // a closed stream hands nothing more over, even to a waiting reader
		case <-s.closing:
			return
		default:
		}
		select {
		case s.out <- f:
		case <-s.closing:
			return
		}
		if messages.IsTerminal(f) {
			return
		}
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
		if s.pumping.Load() {
			<-s.pumpDone
		}
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
// the stream takes them from. Its owner PID names the stream in the actor
// protocol (it is never spawned: the command pushes here directly instead
// of sending). Credits bound the queue: a command has at most a window of
// output frames plus its terminal frame in it, and a push never waits.
type streamSink struct {
	owner *actor.PID
	wake  chan struct{} // holds a signal once something was queued or the queue ended

	mu     sync.Mutex
	queue  []delivery // frames not taken yet, in order
	closed bool       // nothing more is queued: the terminal frame is in, or the stream let go
}

// push queues d; after a terminal frame, or once closed, the queue ends.
func (k *streamSink) push(d delivery) {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return
	}
	k.queue = append(k.queue, d)
	k.closed = messages.IsTerminal(d.f)
	k.mu.Unlock()
	k.signal()
}

// close ends the queue: what it holds is still taken.
func (k *streamSink) close() {
	k.mu.Lock()
	k.closed = true
	k.mu.Unlock()
	k.signal()
}

func (k *streamSink) signal() {
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// take returns the next queued frame, waiting for one; ok is false once the
// queue has ended and is empty, or when closing closes. One goroutine takes
// at a time.
func (k *streamSink) take(ctx context.Context, closing <-chan struct{}) (d delivery, ok bool, err error) {
	for {
		k.mu.Lock()
		if len(k.queue) > 0 {
			d = k.queue[0]
			k.queue[0] = delivery{}
			k.queue = k.queue[1:]
			k.mu.Unlock()
			return d, true, nil
		}
		closed := k.closed
		k.mu.Unlock()
		if closed {
			return delivery{}, false, nil
		}
		select {
		case <-k.wake:
		case <-closing:
			return delivery{}, false, nil
		case <-ctx.Done():
			return delivery{}, false, ctx.Err()
		}
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

// newFrameStream makes a stream; the caller sets sub once the command
// exists.
func (rt *Runtime) newFrameStream() *FrameStream {
	sink := &streamSink{owner: actor.NewPID(rt.engine.Address(), streamKind+"/"+rt.newID()), wake: make(chan struct{}, 1)}
	s := &FrameStream{rt: rt, sink: sink, credit: newCreditBatch(rt.cfg.Window), closing: make(chan struct{})}
	s.Controls = client.Controls{T: rt.Transport(), Ref: func(context.Context) (*messages.CommandRef, error) {
		return wire.CommandMessage(s.sub), nil // set before the stream is handed out
	}}
	rt.sinks.Store(sink.owner.ID, sink)
	return s
}
