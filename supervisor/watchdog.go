package supervisor

import (
	"strings"

	"github.com/anthdm/hollywood/actor"
)

// Watch asks the Watchdog to send Watcher an OwnerDown once Target stops.
// A target that is already gone is reported at once. Only local targets can
// be watched: hollywood reports no remote deaths.
type Watch struct {
	Target  *actor.PID
	Watcher *actor.PID
}

// Unwatch withdraws a Watch.
type Unwatch struct {
	Target  *actor.PID
	Watcher *actor.PID
}

// OwnerDown tells a watcher that the actor it watched has stopped.
type OwnerDown struct {
	PID *actor.PID
}

// watchdogReady is broadcast by the watchdog right after it subscribes; its
// arrival proves the subscription is in place.
type watchdogReady struct{ id string }

// Watchdog is the library's only subscriber to hollywood's event stream
// (hollywood has no monitors). It subscribes when started and unsubscribes
// when stopped, which avoids the dead-letter storm of a stopped subscriber.
// Watches that arrive before its subscription is confirmed are held, then
// checked against the registry, so no stop between the two is missed.
type Watchdog struct {
	ready    bool
	held     []Watch
	watchers map[string]map[string]*actor.PID // target ID -> watcher ID -> watcher
}

// NewWatchdog returns the watchdog's producer.
func NewWatchdog() actor.Producer {
	return func() actor.Receiver { return &Watchdog{watchers: map[string]map[string]*actor.PID{}} }
}

// Receive handles watches and engine events.
func (w *Watchdog) Receive(c *actor.Context) {
	switch msg := c.Message().(type) {
	case actor.Started:
		c.Engine().Subscribe(c.PID())
		c.Engine().BroadcastEvent(watchdogReady{id: c.PID().ID})
	case actor.Stopped:
		c.Engine().Unsubscribe(c.PID())
	case watchdogReady:
		if msg.id != c.PID().ID || w.ready {
			return
		}
		w.ready = true
		for _, h := range w.held {
			w.watch(c, h)
		}
		w.held = nil
	case Watch:
		if !w.ready {
			w.held = append(w.held, msg)
			return
		}
		w.watch(c, msg)
	case Unwatch:
		w.dropHeld(msg)
		if set := w.watchers[msg.Target.GetID()]; set != nil {
			delete(set, msg.Watcher.GetID())
			if len(set) == 0 {
				delete(w.watchers, msg.Target.GetID())
			}
		}
	case actor.ActorStoppedEvent:
		set := w.watchers[msg.PID.GetID()]
		delete(w.watchers, msg.PID.GetID())
		for _, watcher := range set {
			c.Send(watcher, OwnerDown{PID: msg.PID})
		}
	}
}

// dropHeld forgets held watches that an Unwatch withdraws.
func (w *Watchdog) dropHeld(u Unwatch) {
	kept := w.held[:0]
	for _, h := range w.held {
		if h.Target.GetID() != u.Target.GetID() || h.Watcher.GetID() != u.Watcher.GetID() {
			kept = append(kept, h)
		}
	}
	w.held = kept
}

// watch records a watch, or answers at once when the target is gone or not
// local.
func (w *Watchdog) watch(c *actor.Context, m Watch) {
	if m.Target == nil || m.Watcher == nil || m.Target.Address != c.Engine().Address() {
		return
	}
	if !alive(c.Engine(), m.Target) {
		c.Send(m.Watcher, OwnerDown{PID: m.Target})
		return
	}
	set := w.watchers[m.Target.ID]
	if set == nil {
		set = map[string]*actor.PID{}
		w.watchers[m.Target.ID] = set
	}
	set[m.Watcher.ID] = m.Watcher
}

// alive reports whether a local PID is registered. hollywood looks IDs up as
// kind + "/" + id, so the ID is split at its last slash.
func alive(e *actor.Engine, pid *actor.PID) bool {
	i := strings.LastIndex(pid.ID, "/")
	if i < 0 {
		return false
	}
	return e.Registry.GetPID(pid.ID[:i], pid.ID[i+1:]) != nil
}
