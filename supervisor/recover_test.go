package supervisor_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock/internal/syncbuf"
	"github.com/paddockhq/paddock/supervisor"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
)

type boom struct{}

// panicky panics on boom, and in Started or Stopped when asked.
type panicky struct {
	inStarted, inStopped bool
	handler              bool
	stopOnPanic          bool
	handled              *atomic.Int32
	after                *atomic.Int32 // messages handled after a panic
}

type ping struct{}

func (p *panicky) Receive(c *actor.Context) {
	switch c.Message().(type) {
	case actor.Started:
		if p.inStarted {
			panic("in started")
		}
	case actor.Stopped:
		if p.inStopped {
			panic("in stopped")
		}
	case boom:
		panic("boom")
	case ping:
		p.after.Add(1)
	}
}

// withHandler adds a PanicHandler to panicky.
type withHandler struct{ *panicky }

func (w withHandler) OnPanic(_ *actor.Context, v any) bool {
	w.handled.Add(1)
	if v == "handler panics" {
		panic("again")
	}
	return w.stopOnPanic
}

func TestRecoverKeepsTheProcessAlive(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		p             panicky
		handler       bool
		wantStopped   bool
		wantHandled   int32
		wantAfterPing int32
	}{
		"panic in Receive without a handler stops the actor": {wantStopped: true},
		"handler that keeps the actor running":               {handler: true, wantHandled: 1, wantAfterPing: 1},
		"handler that stops the actor":                       {p: panicky{stopOnPanic: true}, handler: true, wantStopped: true, wantHandled: 1},
		"panic in Started":                                   {p: panicky{inStarted: true}, wantStopped: true},
		"panic in Stopped is absorbed":                       {p: panicky{inStopped: true}, wantStopped: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t)
			restarts := recordEvents(t, e, func(m any) bool {
				switch m.(type) {
				case actor.ActorRestartedEvent, actor.ActorMaxRestartsExceededEvent:
					return true
				}
				return false
			})
			var logs syncbuf.Buffer // the actor may still log while the test reads
			p := tc.p
			p.handled, p.after = &atomic.Int32{}, &atomic.Int32{}
			var recv actor.Receiver = &p
			if tc.handler {
				recv = withHandler{&p}
			}
			pid := e.Spawn(func() actor.Receiver { return recv }, "panicky",
				actor.WithMiddleware(supervisor.Recover(zerolog.New(&logs))), actor.WithMaxRestarts(0))
			e.Send(pid, boom{})
			e.Send(pid, ping{})
			if tc.wantStopped {
				waitFor(t, func() bool { return e.Registry.GetPID("panicky", strings.TrimPrefix(pid.ID, "panicky/")) == nil }, "the actor stops")
			} else {
				waitFor(t, func() bool { return p.after.Load() == tc.wantAfterPing }, "the actor keeps handling messages")
				<-e.Poison(pid).Done()
			}
			if tc.p.inStopped {
				<-e.Poison(pid).Done()
			}
			assert.Equal(t, tc.wantHandled, p.handled.Load())
			assert.Zero(t, restarts.count(), "hollywood never restarts our actors")
			assert.Contains(t, logs.String(), "actor panicked")
		})
	}
}

func TestRecoverWhenTheHandlerPanics(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	var logs syncbuf.Buffer
	p := &panicky{handled: &atomic.Int32{}, after: &atomic.Int32{}}
	pid := e.Spawn(func() actor.Receiver { return withHandler{p} }, "twice",
		actor.WithMiddleware(supervisor.Recover(zerolog.New(&logs))), actor.WithMaxRestarts(0))
	e.Send(pid, handlerPanics{})
	waitFor(t, func() bool { return e.Registry.GetPID("twice", strings.TrimPrefix(pid.ID, "twice/")) == nil }, "a handler that panics stops the actor")
	assert.Contains(t, logs.String(), "panic handler panicked")
}

type handlerPanics struct{}

func (w withHandler) Receive(c *actor.Context) {
	if _, ok := c.Message().(handlerPanics); ok {
		panic("handler panics")
	}
	w.panicky.Receive(c)
}

func TestPanicText(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "x", supervisor.PanicText("x"))
	long := supervisor.PanicText(strings.Repeat("a", 1000))
	assert.Len(t, long, 256+3)
}
