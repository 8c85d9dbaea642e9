//go:build unix

package local_test

import (
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// untilLine reads events until stdout holds want (lines may come in one
// chunk or several). Stderr is passed over: a signal sent to the group also
// ends the shell's foreground sleep, which the shell reports there.
func untilLine(t *testing.T, st paddock.Stream, want string) {
	t.Helper()
	var seen strings.Builder
	for !strings.Contains(seen.String(), want) {
		ev := next(t, st)
		require.False(t, ev.Kind.Terminal(), "waiting for %q after %q: %s", want, seen.String(), ev.Kind)
		if ev.Kind == paddock.EventStdout {
			seen.Write(ev.Data)
		}
	}
}

// Signals reach a live command without ending the subscription, and the
// exit that follows is the command's own: INT 130, TERM 143, and a trapped
// USR1 keeps it running and printing; raw and through the runtime.
func TestSignals(t *testing.T) {
	t.Parallel()
	const script = `trap 'echo got-usr1' USR1; echo ready; while :; do sleep 0.05; done`
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			a := newLocal(t, opt)
			rt := startRuntime(t, a)
			view := rt.Adapter(paddock.ProviderLocal)
			h := box(t, a, "sig")
			for _, via := range []struct {
				name string
				a    paddock.Adapter
			}{{"raw", a}, {"runtime", view}} {
				for _, tc := range []struct {
					sig  paddock.Signal
					want string
				}{{paddock.SignalInt, "exit:130"}, {paddock.SignalTerm, "exit:143"}, {paddock.SignalKill, "exit:137"}} {
					st, err := via.a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", script), paddock.SpawnOpts{})
					require.NoError(t, err)
					untilLine(t, st, "ready")
					require.NoError(t, paddock.SignalCommand(ctx, via.a, st, paddock.SignalUsr1), via.name)
					untilLine(t, st, "got-usr1")
					require.NoError(t, paddock.SignalCommand(ctx, via.a, st, paddock.SignalUsr1), "still running after a trapped USR1")
					untilLine(t, st, "got-usr1")
					require.NoError(t, paddock.SignalCommand(ctx, via.a, st, tc.sig))
					assert.Equal(t, tc.want, terminal(events(t, st, 10*time.Second)), "%s after %s", via.name, tc.sig)
					require.ErrorIs(t, paddock.SignalCommand(ctx, via.a, st, paddock.SignalInt), paddock.ErrCommandExited, "after the exit")
					require.NoError(t, st.Close())
				}
				st, err := via.a.Spawn(ctx, h, paddock.NewCmd("sleep", "30"), paddock.SpawnOpts{})
				require.NoError(t, err)
				require.ErrorIs(t, paddock.SignalCommand(ctx, via.a, st, "STOPX"), paddock.ErrInvalid, "a signal outside the set")
				require.NoError(t, paddock.SignalCommand(ctx, via.a, st, paddock.SignalKill))
				require.NoError(t, st.Close())
			}
		})
	}
}

// A TTY starts at the size asked for (80x24 by default) and a resize is
// what the command sees next, raw and through the runtime.
func TestTerminalSize(t *testing.T) {
	t.Parallel()
	a := newLocal(t)
	rt := startRuntime(t, a)
	h := box(t, a, "tty")
	for _, via := range []paddock.Adapter{a, rt.Adapter(paddock.ProviderLocal)} {
		// stty size prints "rows cols"; each line typed asks again.
		script := `stty size; while read line; do stty size; done`
		st, err := via.Spawn(ctx, h, paddock.NewCmd("sh", "-c", script), paddock.SpawnOpts{TTY: true, Stdin: true, Size: &paddock.TermSize{Cols: 120, Rows: 40}})
		require.NoError(t, err)
		untilLine(t, st, "40 120")
		require.NoError(t, paddock.ResizeTerminal(ctx, via, st, paddock.TermSize{Cols: 100, Rows: 30}))
		require.NoError(t, st.WriteStdin(ctx, []byte("again\n")))
		untilLine(t, st, "30 100")
		require.ErrorIs(t, paddock.ResizeTerminal(ctx, via, st, paddock.TermSize{Cols: 0, Rows: 30}), paddock.ErrInvalid)
		require.NoError(t, st.CloseStdin(ctx))
		assert.Equal(t, "exit:0", terminal(events(t, st, 10*time.Second)))
		require.NoError(t, st.Close())

		st, err = via.Spawn(ctx, h, paddock.NewCmd("stty", "size"), paddock.SpawnOpts{TTY: true})
		require.NoError(t, err)
		untilLine(t, st, "24 80")
		require.NoError(t, st.Close())
	}
	_, err := a.Spawn(ctx, h, paddock.NewCmd("true"), paddock.SpawnOpts{Size: &paddock.TermSize{Cols: 80, Rows: 24}})
	require.ErrorIs(t, err, paddock.ErrInvalid, "a size without a TTY")
}
