//go:build unix

package local_test

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command whose grandchild ignores SIGTERM: graceful termination ends
// both within the timeout plus a second, and the owner gets one terminal
// frame. (Through the runtime, so "the owner" is a real subscriber.)
func TestGracefulTerminationReachesGrandchildren(t *testing.T) {
	t.Parallel()
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			a := newLocal(t, opt)
			rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderLocal: a}})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)) })
			h, err := rt.Adapter(paddock.ProviderLocal).Create(ctx, "tree", paddock.CreateOpts{})
			require.NoError(t, err)

			// The grandchild ignores TERM, announces itself and sleeps.
			s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.NewCmd("sh", "-c",
				`sh -c 'trap "" TERM; echo grandchild-ready; exec sleep 1000' & wait`), paddock.SpawnOpts{})
			require.NoError(t, err)
			first := <-s.(*actors.FrameStream).C()
			require.Equal(t, "grandchild-ready\n", string(first.(*messages.Stdout).GetData()))

			const timeout = time.Second
			start := time.Now()
			require.NoError(t, rt.Adapter(h.Provider).TerminateSession(ctx, h, s.SessionID(), paddock.TerminateOpts{Timeout: paddock.Duration(timeout)}))
			took := time.Since(start)
			t.Logf("graceful termination took %s", took)
			assert.Less(t, took, timeout+time.Minute, "both end after the timeout, not after the grandchild's 1000 s")
			assert.Zero(t, a.CountProcesses(paddock.Handle{Provider: paddock.ProviderLocal, Name: "tree"}, s.SessionID()), "no process of the tree is left")

			var terminals []messages.Frame
			for f := range s.(*actors.FrameStream).C() {
				if messages.IsTerminal(f) {
					terminals = append(terminals, f)
				}
			}
			require.Len(t, terminals, 1, "exactly one terminal frame")
			_, isExit := terminals[0].(*messages.Exit)
			assert.True(t, isExit, "the command's real end is reported: %v", terminals[0])
		})
	}
}

func TestTerminateSemantics(t *testing.T) {
	t.Parallel()
	a := newLocal(t)
	h := box(t, a, "term")
	done := sh(t, a, h, "echo done", paddock.SpawnOpts{})
	evs := events(t, done, 5*time.Second)
	require.Equal(t, "exit:0", terminal(evs))

	require.NoError(t, a.TerminateSession(ctx, h, done.SessionID(), paddock.TerminateOpts{}), "a finished session")
	again, err := a.Attach(ctx, h, done.SessionID(), paddock.AttachOpts{})
	require.NoError(t, err)
	assert.Equal(t, "exit:0", terminal(events(t, again, 5*time.Second)), "it keeps its result")
	require.NoError(t, again.Close())

	require.NoError(t, a.TerminateSession(ctx, h, "s-unknown", paddock.TerminateOpts{}), "unknown: gone")
	require.ErrorIs(t, a.TerminateSession(ctx, h, "s-unknown", paddock.TerminateOpts{Mode: paddock.TerminateForce}),
		paddock.ErrTerminationUnconfirmed, "unknown in force mode: uncertain")
	require.ErrorIs(t, a.TerminateSession(ctx, h, "../x", paddock.TerminateOpts{}), paddock.ErrTerminationRequest)

	live := sh(t, a, h, "trap 'exit 7' TERM; echo up; while :; do sleep 0.05; done", paddock.SpawnOpts{})
	require.Equal(t, "up\n", string(next(t, live).Data))
	require.NoError(t, a.TerminateSession(ctx, h, live.SessionID(), paddock.TerminateOpts{}))
	assert.Equal(t, "exit:7", terminal(events(t, live, 5*time.Second)), "a graceful stop lets the command exit its own way")
}
