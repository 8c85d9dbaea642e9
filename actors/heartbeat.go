package actors

import (
	"context"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
)

// Messages of a sandbox actor's heartbeat (docs/contract.md#heartbeats).
type (
	heartbeatTick struct{} // the interval elapsed
	heartbeatDone struct{} // the heartbeat call returned
	commandsAdded struct{} // a command of this sandbox started
	commandsGone  struct{} // a command of this sandbox finished
)

// heartbeat is a sandbox actor's keep-alive state: its adapter's
// Heartbeater, how many of its commands live, whether a request arrived
// since the last tick, and whether a beat is in flight.
type heartbeat struct {
	hb      paddock.Heartbeater
	live    int
	used    bool
	beating bool
	stop    chan struct{}
}

// startHeartbeat arms the ticker when the adapter needs heartbeats: a
// goroutine that sends a tick every interval until the actor stops or the
// runtime shuts down.
func (s *sandboxActor) startHeartbeat(c *actor.Context) {
	hb, ok := s.a.(paddock.Heartbeater)
	if !ok || hb.HeartbeatInterval() <= 0 {
		return
	}
	s.beat = heartbeat{hb: hb, stop: make(chan struct{})}
	e, self, stop, every := c.Engine(), c.PID(), s.beat.stop, hb.HeartbeatInterval()
	clock := paddock.ClockOrSystem(s.rt.cfg.Clock)
	s.rt.goTracked("heartbeat timer of "+s.key, func() {
		for {
			select {
			case <-clock.After(every):
				e.Send(self, heartbeatTick{})
			case <-stop:
				return
			case <-s.rt.opsCtx.Done():
				return
			}
		}
	})
}

// stopHeartbeat ends the ticker: the runtime has let the sandbox go.
func (s *sandboxActor) stopHeartbeat() {
	if s.beat.stop != nil {
		close(s.beat.stop)
		s.beat.stop = nil
	}
}

// tick sends one heartbeat when the sandbox is in use (a live command, or
// a request since the previous tick) and none is in flight.
func (s *sandboxActor) tick(c *actor.Context) {
	b := &s.beat
	send := b.hb != nil && !b.beating && (b.live > 0 || b.used)
	b.used = false
	if !send {
		s.rt.observe(s.key, "idle")
		return
	}
	s.rt.observe(s.key, "sent")
	b.beating = true
	e, self, h, hb := c.Engine(), c.PID(), s.handle(nil), b.hb
	s.rt.goTracked("heartbeat of "+s.key, func() {
		defer e.Send(self, heartbeatDone{})
		ctx, cancel := context.WithTimeout(s.rt.opsCtx, hb.HeartbeatInterval())
		defer cancel()
		if err := recovered(func() error { return hb.Heartbeat(ctx, h) }); err != nil {
			s.rt.log.Warn().Str("sandbox", s.key).Err(err).Msg("heartbeat failed")
		}
	})
}

// beatDone records that a heartbeat call returned.
func (s *sandboxActor) beatDone() {
	s.beat.beating = false
	s.rt.observe(s.key, "done")
}

// observe reports a heartbeat event to a test's observer, if any.
func (rt *Runtime) observe(sandbox, event string) {
	if rt.observeBeat != nil {
		rt.observeBeat(sandbox, event)
	}
}
