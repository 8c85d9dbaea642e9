package actors_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/internal/clocktest"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// beating is a fake whose sandboxes need heartbeats; every third one fails
// and every fifth panics, which must never touch a command.
type beating struct {
	*fake.Adapter
	every time.Duration
	calls atomic.Int32
}

func (b *beating) HeartbeatInterval() time.Duration { return b.every }

func (b *beating) Heartbeat(_ context.Context, h paddock.Handle) error {
	switch n := b.calls.Add(1); {
	case h.Name != "box":
		return errors.New("heartbeat for the wrong sandbox: " + h.Name)
	case n%5 == 0:
		panic("a heartbeat that panics")
	case n%3 == 0:
		return &paddock.UnavailableError{Detail: "heartbeat refused"}
	}
	return nil
}

// The runtime beats while a sandbox has a live command or saw a request
// since the previous tick, and stops once it has neither; a failing or
// panicking heartbeat leaves the command alone.
func TestHeartbeatsFollowUse(t *testing.T) {
	t.Parallel()
	const every = 5 * time.Minute
	clock := clocktest.Frozen()
	b := &beating{Adapter: fake.New(), every: every}
	events := make(chan string, 64)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: b}, Clock: clock})
	require.NoError(t, err)
	actors.ObserveHeartbeats(rt, func(sandbox, event string) {
		assert.Equal(t, "fake/box", sandbox)
		events <- event
	})
	stopped := false
	shutdown := func() {
		if !stopped {
			stopped = true
			sctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			require.NoError(t, rt.Shutdown(sctx))
		}
	}
	t.Cleanup(shutdown)

	next := func() string {
		t.Helper()
		select {
		case e := <-events:
			return e
		case <-time.After(time.Minute):
			require.FailNow(t, "no heartbeat event within 5s")
		}
		return ""
	}
	// tick lets one interval pass once the timer is armed, and answers the
	// tick's decision (waiting for a sent beat to finish).
	sent := 0
	tick := func() string {
		t.Helper()
		require.Eventually(t, func() bool { return clock.Pending() == 1 }, time.Minute, time.Millisecond, "the heartbeat timer re-arms")
		require.Equal(t, []time.Duration{every}, clock.Delays()[len(clock.Delays())-1:], "the timer waits one interval")
		clock.Tick(every)
		e := next()
		if e == "sent" {
			sent++
			require.Equal(t, "done", next())
		}
		return e
	}

	h, err := rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	assert.Equal(t, "sent", tick(), "a request since the last tick keeps the sandbox alive")
	assert.Equal(t, "idle", tick(), "no command and no request: no heartbeat")

	s, err := spawn(rt, ctx, h, paddock.NewCmd("agent", "stay"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	for i := range 6 {
		assert.Equal(t, "sent", tick(), "a live command keeps the sandbox alive (tick %d)", i)
	}
	require.NoError(t, s.WriteStdin(ctx, []byte("still here")))
	f := frame(t, s)
	require.Equal(t, "echo:still here", string(f.(*messages.Stdout).GetData()), "failed and panicking heartbeats left the command alone")
	require.NoError(t, s.CloseStdin(ctx))
	frames := all(t, s)
	require.NotEmpty(t, frames)
	exit, ok := frames[len(frames)-1].(*messages.Exit)
	require.True(t, ok, "the command ends with its exit")
	require.Zero(t, exit.GetCode())

	// The root tells the sandbox the command ended; until that lands a tick
	// may still beat, after it none does.
	deadline := time.Now().Add(5 * time.Second)
	for tick() == "sent" {
		require.True(t, time.Now().Before(deadline), "heartbeats continued after the command ended")
	}
	assert.Equal(t, "idle", tick(), "heartbeats stay stopped")

	shutdown()
	assert.Equal(t, int32(sent), b.calls.Load(), "every heartbeat sent was one call, none after the runtime let go")
	assert.GreaterOrEqual(t, sent, 7)
	assert.Empty(t, events, "nothing beats after the runtime let go (Shutdown waited for the timer)")
}
