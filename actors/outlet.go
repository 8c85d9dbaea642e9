package actors

import (
	"sync"
	"sync/atomic"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock/messages"
	"github.com/paddockhq/paddock/supervisor"
)

// outlet is a subscription's one way out to its subscriber. The reader
// goroutine emits the stream's frames through it and the command actor the
// failures it decides (a panic, a stop); its lock keeps the guard's
// sequence and the order of arrival the same, and nothing leaves after the
// terminal frame or a detach. Frames go straight to the owner actor, or
// into a plain-Go stream's queue, never through the command actor's inbox.
type outlet struct {
	mu       sync.Mutex
	guard    *supervisor.Guard
	engine   *actor.Engine
	owner    *actor.PID
	sink     *streamSink // the owner's queue when it is a plain-Go stream
	self     *actor.PID  // the command actor, the sender the owner credits
	detached bool
	lastSent atomic.Uint64 // the seq of the last frame sent
}

func newOutlet(rt *Runtime, owner *actor.PID, g *supervisor.Guard) *outlet {
	return &outlet{guard: g, engine: rt.engine, owner: owner, sink: rt.sinkOf(owner)}
}

// emit sends the frame that frame returns (nil: none) and reports whether it was
// the terminal frame. After a detach nothing is made or sent.
func (o *outlet) emit(frame func(*supervisor.Guard) messages.Frame) (terminal bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.detached {
		return false
	}
	f := frame(o.guard)
	if f == nil {
		return false
	}
	if o.sink != nil {
		o.sink.push(delivery{f: f, from: o.self})
	} else {
		o.engine.SendWithSender(o.owner, f, o.self)
	}
	o.lastSent.Store(f.GetSeq())
	return messages.IsTerminal(f)
}

// beat tells a remote owner the last frame sent: a Beat leaves after
// every frame sent before it. Nothing leaves after a detach or the
// terminal frame.
func (o *outlet) beat(ref string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.detached || o.guard.Done() {
		return
	}
	o.engine.SendWithSender(o.owner, &messages.Beat{Ref: ref, LastSeq: o.lastSent.Load()}, o.self)
}

// ended reports whether the terminal frame was sent.
func (o *outlet) ended() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.guard.Done()
}

// detach closes the outlet: no frame leaves after it returns, and a
// plain-Go stream's channel closes without a terminal frame.
func (o *outlet) detach() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.detached = true
	if o.sink != nil {
		o.sink.close()
	}
}
