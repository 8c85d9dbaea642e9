package fake_test

import (
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The termination suite of the reference fake (docs/contract.md#fake).
func TestTermination(t *testing.T) {
	t.Parallel()
	t.Run("detach, attach, terminate: 137 to the attacher only; the neighbour lives", func(t *testing.T) {
		a := world(t)
		h := box(t, a, "box")
		detached := script(t, a, h, "out:ready", "stay")
		next(t, detached)
		neighbour := script(t, a, h, "out:ready", "stay")
		next(t, neighbour)

		require.NoError(t, detached.Close())
		assert.True(t, a.SessionLive("box", detached.SessionID()), "detaching leaves the command running")
		require.ErrorIs(t, detached.WriteStdin(ctx, []byte("x")), paddock.ErrCommandExited)
		require.ErrorIs(t, detached.CloseStdin(ctx), paddock.ErrCommandExited)

		attacher, err := a.Attach(ctx, h, detached.SessionID(), paddock.AttachOpts{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = attacher.Close() })
		assert.Equal(t, []string{"stdout:ready"}, text([]paddock.Event{next(t, attacher)}), "the replay")

		require.NoError(t, a.TerminateSession(ctx, h, detached.SessionID(), paddock.TerminateOpts{}))
		assert.Equal(t, []string{"exit:137"}, text(drain(t, attacher)))
		assert.Empty(t, drain(t, detached), "the detached subscriber gets nothing")
		assert.False(t, a.SessionLive("box", detached.SessionID()), "the command is dead")

		require.NoError(t, neighbour.WriteStdin(ctx, []byte("still")))
		assert.Equal(t, []string{"stdout:echo:still"}, text([]paddock.Event{next(t, neighbour)}))
	})
	t.Run("via another sandbox: ok and no effect", func(t *testing.T) {
		a := world(t)
		h := box(t, a, "box")
		other := box(t, a, "other")
		st := script(t, a, h, "out:ready", "stay")
		next(t, st)
		require.NoError(t, a.TerminateSession(ctx, other, st.SessionID(), paddock.TerminateOpts{}))
		assert.True(t, a.SessionLive("box", st.SessionID()))
		requireQuiet(t, st)
	})
	t.Run("unknown id is ok; bad ids are invalid", func(t *testing.T) {
		a := world(t)
		h := box(t, a, "box")
		require.NoError(t, a.TerminateSession(ctx, h, "fake-sess-404", paddock.TerminateOpts{}))
		require.ErrorIs(t, a.TerminateSession(ctx, h, "../id", paddock.TerminateOpts{}), paddock.ErrTerminationRequest)
		require.ErrorIs(t, a.TerminateSession(ctx, h, "s", paddock.TerminateOpts{Mode: "kill"}), paddock.ErrTerminationRequest)
	})
	t.Run("concurrent terminations: both ok, one frame", func(t *testing.T) {
		a := world(t)
		h := box(t, a, "box")
		st := script(t, a, h, "out:ready", "stay")
		next(t, st)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = a.TerminateSession(ctx, h, st.SessionID(), paddock.TerminateOpts{})
			}()
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		assert.Equal(t, []string{"exit:137"}, text(drain(t, st)))
	})
	t.Run("force kills a live session and is uncertain for an unknown id", func(t *testing.T) {
		a := world(t)
		h := box(t, a, "box")
		st := script(t, a, h, "out:ready", "stay")
		next(t, st)
		force := paddock.TerminateOpts{Mode: paddock.TerminateForce}
		require.NoError(t, a.TerminateSession(ctx, h, st.SessionID(), force))
		assert.Equal(t, []string{"exit:137"}, text(drain(t, st)))
		require.ErrorIs(t, a.TerminateSession(ctx, h, "fake-sess-404", force), paddock.ErrTerminationUnconfirmed)
	})
	t.Run("a completed session keeps its result", func(t *testing.T) {
		a := world(t)
		h := box(t, a, "box")
		st := script(t, a, h, "out:done")
		assert.Equal(t, []string{"stdout:done", "exit:0"}, text(drain(t, st)))
		require.NoError(t, a.TerminateSession(ctx, h, st.SessionID(), paddock.TerminateOpts{}))
		att, err := a.Attach(ctx, h, st.SessionID(), paddock.AttachOpts{})
		require.NoError(t, err)
		assert.Equal(t, []string{"stdout:done", "exit:0"}, text(drain(t, att)), "still exit 0, no second terminal")
	})
	t.Run("after Destroy, stop and terminate of the old id are ok", func(t *testing.T) {
		a := world(t)
		h := box(t, a, "box")
		st := script(t, a, h, "out:ready", "stay")
		next(t, st)
		require.NoError(t, a.Destroy(ctx, h))
		require.NoError(t, st.Close())
		require.NoError(t, a.TerminateSession(ctx, h, st.SessionID(), paddock.TerminateOpts{}))
	})
	t.Run("gated by the configured capabilities", func(t *testing.T) {
		a := fakeWith(t, paddock.CapAttach, paddock.CapTerminateSession)
		h := box(t, a, "box")
		require.ErrorIs(t, a.TerminateSession(ctx, h, "s", paddock.TerminateOpts{Mode: paddock.TerminateForce}), paddock.ErrNotSupported)
		require.NoError(t, a.TerminateSession(ctx, h, "s", paddock.TerminateOpts{}))
	})
}

func TestDestroyStopsLiveCommandsWithOneError(t *testing.T) {
	t.Parallel()
	a := world(t)
	h := box(t, a, "box")
	st := script(t, a, h, "out:ready", "stay")
	next(t, st)
	attacher, err := a.Attach(ctx, h, st.SessionID(), paddock.AttachOpts{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = attacher.Close() })
	finished := script(t, a, h, "out:x", "exit:2")
	require.Eventually(t, func() bool { return !a.SessionLive("box", finished.SessionID()) }, time.Minute, time.Millisecond)
	require.NoError(t, a.Destroy(ctx, h))

	want := []string{"error:unavailable: closed_before_exit"}
	assert.Equal(t, want, text(drain(t, st)), "each subscriber gets one error, never zero terminal frames")
	assert.Equal(t, append([]string{"stdout:ready"}, want...), text(drain(t, attacher)))
	assert.Equal(t, []string{"stdout:x", "exit:2"}, text(drain(t, finished)), "a finished command keeps its exit")
	_, err = a.Get(ctx, h)
	require.ErrorIs(t, err, paddock.ErrNotFound)
}

func TestNamedSpawn(t *testing.T) {
	t.Parallel()
	a := world(t)
	h := box(t, a, "box")
	named := paddock.SpawnOpts{Stdin: true, Name: "dev"}
	first, err := a.Spawn(ctx, h, paddock.NewCmd("emit", "out:ready", "stay"), named)
	require.NoError(t, err)
	t.Cleanup(func() { _ = first.Close() })
	next(t, first)

	second, err := a.Spawn(ctx, h, paddock.NewCmd("emit", "out:other"), named)
	require.NoError(t, err)
	t.Cleanup(func() { _ = second.Close() })
	assert.Equal(t, first.SessionID(), second.SessionID(), "the live session of that name is returned")
	assert.Equal(t, []string{"stdout:ready"}, text([]paddock.Event{next(t, second)}), "as an attach: replay first")

	require.NoError(t, second.CloseStdin(ctx))
	assert.Equal(t, []string{"exit:0"}, text(drain(t, first)))
	assert.Equal(t, []string{"exit:0"}, text(drain(t, second)))

	third, err := a.Spawn(ctx, h, paddock.NewCmd("emit", "out:again"), named)
	require.NoError(t, err)
	t.Cleanup(func() { _ = third.Close() })
	assert.NotEqual(t, first.SessionID(), third.SessionID(), "once it ended, the name starts a new session")
	assert.Equal(t, []string{"stdout:again", "exit:0"}, text(drain(t, third)))

	sessions, err := a.ListSessions(ctx, h)
	require.NoError(t, err)
	require.Len(t, sessions, 2)
	for _, s := range sessions {
		assert.Equal(t, "dev", s.Name)
	}

	plain := fakeWith(t, paddock.CapAttach)
	ph := box(t, plain, "box")
	_, err = plain.Spawn(ctx, ph, paddock.NewCmd("emit"), named)
	require.ErrorIs(t, err, paddock.ErrNotSupported, "without named_spawn the name is refused, not ignored")
	_, err = a.Spawn(ctx, h, paddock.NewCmd("emit"), paddock.SpawnOpts{Name: "a/b"})
	require.ErrorIs(t, err, paddock.ErrInvalid)
}
