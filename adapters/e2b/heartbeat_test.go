package e2b_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/paddockhq/paddock/internal/clocktest"
	"github.com/paddockhq/paddock/messages"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const timeoutRoute = "POST /sandboxes/{id}/timeout"

// A heartbeat sets the TTL from now; a paused sandbox is left alone (no
// call); a refused heartbeat is the provider's error.
func TestHeartbeat(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv, func(c *e2b.Config) { c.TTL = 12 * time.Minute })
	assert.Equal(t, 2*time.Minute, a.HeartbeatInterval(), "five heartbeats fit in a TTL")
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	id := srv.Sandboxes()[0]
	assert.Equal(t, srv.Now().Add(12*time.Minute), srv.EndAt(id))
	srv.Advance(11 * time.Minute)
	require.NoError(t, a.Heartbeat(ctx, h))
	assert.Equal(t, srv.Now().Add(12*time.Minute), srv.EndAt(id), "the TTL runs from the heartbeat")
	assert.JSONEq(t, `{"timeout":720}`, string(srv.Requests()[len(srv.Requests())-1].Body))
	srv.Advance(11 * time.Minute)
	assert.Equal(t, "running", srv.State(id), "kept alive past its first TTL")
	srv.Advance(2 * time.Minute)
	assert.Equal(t, "paused", srv.State(id), "without heartbeats the TTL pauses it")

	before := srv.Count(timeoutRoute)
	require.NoError(t, a.Heartbeat(ctx, h))
	assert.Equal(t, before, srv.Count(timeoutRoute), "a paused sandbox gets no heartbeat")
	assert.Equal(t, "paused", srv.State(id))

	_, err = a.Resume(ctx, h)
	require.NoError(t, err)
	srv.Fail(timeoutRoute, e2btest.Status(http.StatusServiceUnavailable))
	require.ErrorIs(t, a.Heartbeat(ctx, h), paddock.ErrUnavailable)
	require.ErrorIs(t, a.Heartbeat(ctx, a.BuildHandle("absent")), paddock.ErrNotFound)
}

// Through the runtime, a sandbox running a command is kept alive across
// many TTLs by heartbeats on the runtime's clock (a manual one here, moved
// with the server's); once the command ends and nothing uses the sandbox,
// the heartbeats stop and the TTL pauses it.
func TestTheRuntimeKeepsABusySandboxAlive(t *testing.T) {
	t.Parallel()
	const ttl = 6 * time.Minute
	srv := e2btest.NewServer(t)
	clock := clocktest.Frozen()
	a := newAdapter(t, srv, func(c *e2b.Config) { c.TTL = ttl })
	every := a.HeartbeatInterval()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderE2B: a}, Clock: clock, Logger: zerolog.New(zerolog.NewTestWriter(t))})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
	})
	h, err := rt.Adapter(paddock.ProviderE2B).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	id := srv.Sandboxes()[0]
	s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.NewCmd("cat"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)

	// pass moves the server's clock one interval and the runtime's until
	// the due heartbeat lands (a tick that finds the previous heartbeat
	// still in flight rightly skips, so one more may be needed); idle, it
	// moves both once.
	pass := func(wantBeat bool) {
		t.Helper()
		srv.Advance(every)
		before := srv.Count(timeoutRoute)
		require.Eventually(t, func() bool {
			if wantBeat && srv.Count(timeoutRoute) > before {
				return true
			}
			if clock.Pending() == 1 {
				clock.Tick(every)
				return !wantBeat
			}
			return false
		}, time.Minute, time.Millisecond) // a bound for a starved machine: it returns as soon as the beat lands
	}
	for range 3 * ttl / every { // three TTLs with a command running
		pass(true)
		require.Equal(t, "running", srv.State(id), "the busy sandbox never expires")
	}
	require.NoError(t, s.WriteStdin(ctx, []byte("alive\n")))
	require.NoError(t, s.CloseStdin(ctx))
	var out []byte
	for f := range s.(*actors.FrameStream).C() {
		if d, ok := stdoutOf(f); ok {
			out = append(out, d...)
		}
	}
	assert.Equal(t, "alive\n", string(out), "the command outlived three TTLs")

	// Idle now: the heartbeats stop within a few intervals and the TTL
	// pauses the sandbox.
	for i := 0; srv.State(id) != "paused"; i++ {
		require.Less(t, i, 3*int(ttl/every), "an idle sandbox lives out its TTL")
		pass(false)
	}
}

// stdoutOf is the data of a stdout frame.
func stdoutOf(f messages.Frame) ([]byte, bool) {
	out, ok := f.(*messages.Stdout)
	return out.GetData(), ok
}
