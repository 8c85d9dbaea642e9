//go:build unix

package local_test

import (
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/internal/heavy"
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

// A resize racing the command's exit (which closes its terminal) is a
// resize or command_exited, never a use of a closed file: under -race the
// old resize read the file's descriptor while the exit closed it.
func TestResizeRacingTheExit(t *testing.T) {
	t.Parallel()
	a := newLocal(t)
	h := box(t, a, "tty-race")
	for range 30 {
		st, err := a.Spawn(ctx, h, paddock.NewCmd("true"), paddock.SpawnOpts{TTY: true})
		require.NoError(t, err)
		for {
			err := st.(paddock.Resizer).Resize(ctx, paddock.TermSize{Cols: 100, Rows: 30})
			if errors.Is(err, paddock.ErrCommandExited) {
				break
			}
			require.NoError(t, err)
		}
		assert.Equal(t, "exit:0", terminal(events(t, st, 10*time.Second)))
		require.NoError(t, st.Close())
	}
}

// A command that prints without end stops growing its journal at the cap;
// the live subscriber and a later attacher both get the output up to the
// cap and then session_output_limit, never an exit.
func TestTheJournalStopsAtItsCap(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			a := newLocal(t, opt, withSessionOutputLimit(limit))
			h := box(t, a, "chatty")
			st := sh(t, a, h, "yes", paddock.SpawnOpts{})
			live := events(t, st, time.Minute)
			got := len(stdout(live))
			last := live[len(live)-1]
			require.Equal(t, paddock.EventError, last.Kind, "terminal %s", terminal(live))
			require.ErrorIs(t, last.Err, paddock.ErrSessionOutputLimit)
			assert.False(t, paddock.IsTransient(last.Err))
			assert.LessOrEqual(t, got, limit)
			assert.Greater(t, got, limit-64<<10, "output is kept up to the cap")

			journal := filepath.Join(a.Root(), "chatty", "sessions", st.SessionID(), "journal")
			info, err := os.Stat(journal)
			require.NoError(t, err)
			// The cap counts output; each record adds a 5-byte header.
			assert.LessOrEqual(t, info.Size(), int64(limit+16<<10), "the journal stops at the cap")

			again, err := a.Attach(ctx, h, st.SessionID(), paddock.AttachOpts{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = again.Close() })
			replay := events(t, again, time.Minute)
			assert.Equal(t, got, len(stdout(replay)), "an attacher gets the same output")
			require.ErrorIs(t, replay[len(replay)-1].Err, paddock.ErrSessionOutputLimit, "and the same end")

			res, err := a.Exec(ctx, h, paddock.NewCmd("echo", "still usable"), paddock.ExecOpts{})
			require.NoError(t, err)
			assert.Equal(t, "still usable\n", string(res.Stdout))
		})
	}
}

// Through the runtime the owner gets the limit as a typed error frame.
func TestTheJournalCapReachesTheOwner(t *testing.T) {
	t.Parallel()
	a := newLocal(t, withIsolation(local.IsolationNone), withSessionOutputLimit(256<<10))
	rt := startRuntime(t, a)
	h, err := rt.Adapter(paddock.ProviderLocal).Create(ctx, "chatty", paddock.CreateOpts{})
	require.NoError(t, err)
	s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.NewCmd("yes"), paddock.SpawnOpts{})
	require.NoError(t, err)
	var last any
	for f := range s.(*actors.FrameStream).C() {
		last = f
	}
	frame, ok := last.(*messages.Error)
	require.True(t, ok, "the terminal frame is an error: %T", last)
	assert.Equal(t, messages.ErrorKind_ERROR_KIND_INVALID, frame.GetKind())
	assert.Equal(t, paddock.DetailSessionOutputLimit, frame.GetReason())
}

// gigabyteLines is how many numbered lines seq prints for just over 1 GiB.
const gigabyteLines = 118485293

// TestVolumeGigabyteThroughSpawn streams 1 GiB of numbered lines through a
// session (journal written, then read back) and compares it, byte for
// byte by hash, with the same command read directly. Built with the race
// detector it streams an eighth of that (heavy.Volume).
func TestVolumeGigabyteThroughSpawn(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("streams 1 GiB")
	}
	heavy.Lock(t)
	lines := strconv.Itoa(heavy.Volume(gigabyteLines))
	direct := sha256.New()
	cmd := exec.Command("seq", "1", lines)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	wantBytes, err := io.Copy(direct, out)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait())
	if !heavy.Race {
		require.GreaterOrEqual(t, wantBytes, int64(1<<30), "just over 1 GiB")
	}

	a := newLocal(t, withSessionOutputLimit(2<<30)) // over the default cap
	h := box(t, a, "big")
	start := time.Now()
	st, err := a.Spawn(ctx, h, paddock.NewCmd("seq", "1", lines), paddock.SpawnOpts{})
	require.NoError(t, err)
	defer st.Close()
	got := sha256.New()
	var n int64
	for {
		ev := next(t, st)
		if ev.Kind == paddock.EventStdout {
			got.Write(ev.Data)
			n += int64(len(ev.Data))
			continue
		}
		require.Equal(t, paddock.EventExit, ev.Kind, "no stderr, then the exit: %v", ev.Err)
		require.Equal(t, 0, ev.Code)
		break
	}
	t.Logf("through Spawn: %d bytes in %s (%.0f MB/s)", n, time.Since(start), float64(n)/time.Since(start).Seconds()/(1<<20))
	assert.Equal(t, wantBytes, n, "complete")
	assert.Equal(t, direct.Sum(nil), got.Sum(nil), "in order, byte for byte")
}

// A command that prints nothing holds no read buffer while it waits: its
// output readers take a buffer only when there are bytes to read. 100
// quiet sessions (each read once) grow the heap by far less than one
// 128 KiB buffer per output. Not parallel: the heap is the process's.
func TestQuietSessionsHoldNoReadBuffers(t *testing.T) {
	a := newLocal(t, withIsolation(local.IsolationNone))
	h := box(t, a, "quiet")
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const sessions = 100
	before := heap()
	for range sessions {
		st := sh(t, a, h, "echo up; exec sleep 1000", paddock.SpawnOpts{})
		require.Equal(t, "up\n", string(next(t, st).Data))
	}
	after := heap()
	grew := int64(after) - int64(before)
	t.Logf("the heap grew %d KiB for %d quiet sessions", grew>>10, sessions)
	assert.Less(t, grew, int64(sessions*64<<10), "a quiet session holds no 128 KiB read buffer")
}
