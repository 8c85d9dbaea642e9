package docker_test

import (
	"bytes"
	"crypto/sha256"
	"io"
	"io/fs"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/paddockhq/paddock/adapters/docker/dockertest"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/stretchr/testify/require"
)

// A timed-out Exec is killed inside the sandbox, with everything it
// started, not only abandoned.
func TestExecTimeoutKillsInside(t *testing.T) {
	t.Parallel()
	a := newAdapter(t)
	h := sandbox(t, a, "timeouts", nil)
	start := time.Now()
	_, err := a.Exec(ctxFor(t, 10*time.Minute), h, paddock.NewCmd("sh", "-c", "sleep 601 & setsid sleep 602 & sleep 603"),
		paddock.ExecOpts{Timeout: paddock.Duration(time.Second)})
	require.ErrorIs(t, err, paddock.ErrExecTimeout)
	require.Less(t, time.Since(start), 5*time.Minute, "the deadline ended it, not the command's ten minutes")
	out, _ := execOut(t, a, h, "sh", "-c", "ps -o args | grep -c '^sleep 60' || true")
	require.Equal(t, "0\n", out, "the command, its child and the one that left its group are gone")
}

// The adapter's ceiling clamps an hour's request, visibly, and an exec
// past its output cap is killed inside the sandbox like a timed-out one.
func TestExecLimitsAndCap(t *testing.T) {
	t.Parallel()
	a := newAdapter(t, func(c *docker.Config) { c.Exec = paddock.ExecLimits{MaxTimeout: 2 * time.Second} })
	h := sandbox(t, a, "limits", nil)
	start := time.Now()
	_, err := a.Exec(ctxFor(t, 10*time.Minute), h, paddock.NewCmd("sleep", "600"), paddock.ExecOpts{Timeout: paddock.Duration(time.Hour)})
	var et *paddock.ExecTimeoutError
	require.ErrorAs(t, err, &et)
	require.Equal(t, 2*time.Second, et.Timeout)
	require.Less(t, time.Since(start), 5*time.Minute, "the ceiling ended it, not the command's ten minutes")
	res, err := a.Exec(ctxFor(t, time.Minute), h, paddock.NewCmd("sh", "-c", "echo out; echo err >&2; exit 3"), paddock.ExecOpts{Timeout: paddock.Duration(time.Hour)})
	require.NoError(t, err)
	require.Equal(t, paddock.ExecResult{Stdout: []byte("out\n"), Stderr: []byte("err\n"), ExitCode: 3, Timeout: paddock.Duration(2 * time.Second)}, res)

	_, err = a.Exec(ctxFor(t, time.Minute), h, paddock.NewCmd("sh", "-c", "yes paddock-cap"), paddock.ExecOpts{MaxOutput: 1 << 20})
	require.ErrorIs(t, err, paddock.ErrExecOutputLimit)
	out, _ := execOut(t, a, h, "sh", "-c", "ps -o args | grep -c '^yes paddock-cap' || true")
	require.Equal(t, "0\n", out, "the command printing past the cap is gone")
}

// Sessions outlive their subscriber and replay from byte zero, live or
// finished, ending with the recorded exit; finished sessions stay listed.
func TestSessionsReplayAndOutliveTheirSubscribers(t *testing.T) {
	t.Parallel()
	a := newAdapter(t)
	h := sandbox(t, a, "sessions", nil)
	ctx := ctxFor(t, 2*time.Minute)
	before := time.Now()
	st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", "echo one; sleep 0.2; echo err >&2; read x; echo two; exit 7"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	id := st.SessionID()
	require.Regexp(t, `^[0-9a-f]{24}$`, id)
	// The first stdout; on a busy machine stderr's "err" may come first
	// (order across the two streams is not kept).
	ev, err := st.Next(ctx)
	for err == nil && ev.Kind == paddock.EventStderr {
		ev, err = st.Next(ctx)
	}
	require.NoError(t, err)
	require.Equal(t, paddock.Stdout([]byte("one\n")), ev)
	require.NoError(t, st.Close(), "detach")

	at, err := a.Attach(ctx, h, id, paddock.AttachOpts{Stdin: true})
	require.NoError(t, err)
	require.NoError(t, at.WriteStdin(ctx, []byte("go\n")))
	stdout, stderr, last := adaptertest.Drain(t, at, 30*time.Second)
	require.Equal(t, "one\ntwo\n", stdout)
	require.Equal(t, "err\n", stderr)
	require.Equal(t, paddock.Exit(7), last)
	require.NoError(t, at.Close())

	again, err := a.Attach(ctx, h, id, paddock.AttachOpts{})
	require.NoError(t, err, "a finished session is still attachable")
	stdout, _, last = adaptertest.Drain(t, again, 30*time.Second)
	require.Equal(t, "one\ntwo\n", stdout, "replayed whole")
	require.Equal(t, paddock.Exit(7), last, "with its recorded exit, never a made-up one")
	require.NoError(t, again.Close())

	sessions, err := a.ListSessions(ctx, h)
	require.NoError(t, err)
	require.Len(t, sessions, 1)
	require.Equal(t, id, sessions[0].ID)
	require.Equal(t, "sh -c echo one; sleep 0.2; echo err >&2; read x; echo two; exit 7", sessions[0].Command)
	created := sessions[0].CreatedAt
	require.False(t, created.Before(before.Truncate(time.Second)) || created.After(time.Now()), "created %v, spawned after %v", created, before)
	require.NoError(t, a.TerminateSession(ctx, h, id, paddock.TerminateOpts{Timeout: paddock.Duration(paddock.MaxTerminateTimeout)}), "a finished session terminates as done")

	_, err = a.Attach(ctx, h, "0123456789abcdef01234567", paddock.AttachOpts{})
	require.ErrorIs(t, err, paddock.ErrNotFound)
}

// A TTY session runs on a terminal: no stderr, listed, terminable, not
// re-attachable.
func TestTTYSession(t *testing.T) {
	t.Parallel()
	a := newAdapter(t)
	h := sandbox(t, a, "terminal", nil)
	ctx := ctxFor(t, time.Minute)
	st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", "[ -t 0 ] && echo a-tty; read x; echo got-$x >&2; exit 3"), paddock.SpawnOpts{TTY: true, Stdin: true})
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, st.WriteStdin(ctx, []byte("hi\n")))
	stdout, stderr, last := adaptertest.Drain(t, st, 30*time.Second)
	require.Contains(t, stdout, "a-tty")
	require.Contains(t, stdout, "got-hi", "stderr goes to the terminal")
	require.Empty(t, stderr)
	require.Equal(t, paddock.Exit(3), last)
	sessions, err := a.ListSessions(ctx, h)
	require.NoError(t, err)
	require.Len(t, sessions, 1)
	require.True(t, sessions[0].TTY)
	_, err = a.Attach(ctx, h, st.SessionID(), paddock.AttachOpts{})
	require.ErrorIs(t, err, paddock.ErrInvalid)

	// The largest allowance: the terminating exec itself waited past the
	// default's 15 s on a CI machine saturated by the rest of the suite.
	live, err := a.Spawn(ctx, h, paddock.NewCmd("sleep", "100"), paddock.SpawnOpts{TTY: true})
	require.NoError(t, err)
	defer live.Close()
	require.NoError(t, a.TerminateSession(ctx, h, live.SessionID(), paddock.TerminateOpts{Mode: paddock.TerminateForce, Timeout: paddock.Duration(paddock.MaxTerminateTimeout)}))
	_, _, last = adaptertest.Drain(t, live, 30*time.Second)
	require.Equal(t, paddock.Exit(137), last)
}

// Files stream both ways, 8 MiB intact, parents created, on tmpfs under a
// read-only root; a missing file is not_found.
func TestFiles(t *testing.T) {
	t.Parallel()
	a := newAdapter(t)
	h := sandbox(t, a, "files", nil)
	ctx := ctxFor(t, time.Minute)
	data := make([]byte, 8<<20)
	rng := rand.NewChaCha8([32]byte{1})
	_, _ = rng.Read(data)
	require.NoError(t, a.WriteFile(ctx, h, "/workspace/a/b/c.bin", 0o600, bytes.NewReader(data)))
	rc, err := a.ReadFile(ctx, h, "/workspace/a/b/c.bin")
	require.NoError(t, err)
	got, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	require.Equal(t, sha256.Sum256(data), sha256.Sum256(got))
	out, _ := execOut(t, a, h, "stat", "-c", "%a %u", "/workspace/a/b/c.bin")
	require.Equal(t, "600 1000\n", out)
	_, err = a.ReadFile(ctx, h, "/workspace/none")
	require.ErrorIs(t, err, paddock.ErrNotFound)
	_, err = a.ReadFile(ctx, h, "/workspace/a")
	require.ErrorIs(t, err, paddock.ErrNotFound, "a directory is not a file")
	rc, err = a.ReadFile(ctx, h, "/workspace/empty")
	require.ErrorIs(t, err, paddock.ErrNotFound)
	require.NoError(t, a.WriteFile(ctx, h, "/workspace/empty", 0o644, strings.NewReader("")))
	rc, err = a.ReadFile(ctx, h, "/workspace/empty")
	require.NoError(t, err)
	got, _ = io.ReadAll(rc)
	require.Empty(t, got)
	require.NoError(t, rc.Close())
	require.ErrorIs(t, a.WriteFile(ctx, h, "relative", 0o644, strings.NewReader("x")), paddock.ErrInvalid)
}

// A stopped sandbox is suspended; exec on it is a clear unavailable error;
// Create brings it back (the origin left it stopped).
func TestStoppedSandbox(t *testing.T) {
	t.Parallel()
	a := newAdapter(t)
	h := sandbox(t, a, "stopped", map[string]string{"idle_timeout": "1ms", "max_age": "-1s"})
	time.Sleep(1100 * time.Millisecond) // past the stamp throttle and the idle bound
	report, err := paddock.Reap(ctxFor(t, time.Minute), a, paddock.ReapOpts{})
	require.NoError(t, err)
	require.Contains(t, report.Stopped, h.Name)
	info, err := a.Get(ctxFor(t, 10*time.Second), h)
	require.NoError(t, err)
	require.Equal(t, paddock.StatusSuspended, info.Status)
	_, err = a.Exec(ctxFor(t, 10*time.Second), h, paddock.NewCmd("true"), paddock.ExecOpts{})
	require.ErrorIs(t, err, paddock.ErrUnavailable)
	require.Contains(t, err.Error(), "not running")
	_, err = a.Create(ctxFor(t, time.Minute), h.Name, paddock.CreateOpts{})
	require.NoError(t, err)
	out, code := execOut(t, a, h, "echo", "running again")
	require.Equal(t, 0, code)
	require.Equal(t, "running again\n", out)
}

// Ordinary images are usable: one shaped like a distro's, whose /tmp and
// root-owned /workspace become the sandbox user's scratch (the image's
// project file is hidden by the mount, as documented) and whose own
// non-root user is not the one commands run as; and a bare one with no
// users, /tmp or /workspace at all. Home is the workspace in both.
func TestOrdinaryImagesAreUsable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		image, modes string
	}{
		{dockertest.DistroImage, "1000 1777\n1000 755\n"}, // the image's own modes, the sandbox user's mounts
		{dockertest.BareImage, "1000 1777\n1000 777\n"},   // the mounts' modes
	} {
		t.Run(tc.image, func(t *testing.T) {
			a := newAdapter(t, func(c *docker.Config) { c.Image = tc.image; c.Helpers = false })
			h := sandbox(t, a, "ordinary", nil)
			out, code := execOut(t, a, h, "sh", "-c", `id -u; echo "$HOME"; pwd; ls -A /workspace | wc -l
touch /tmp/a /workspace/b "$HOME/.c" && echo writable; stat -c '%u %a' /tmp /workspace`)
			require.Equal(t, 0, code, out)
			require.Equal(t, "1000\n/workspace\n/workspace\n0\nwritable\n"+tc.modes, out)
		})
	}
}

// Signals reach a journaled session's process group and a TTY session:
// INT ends a shell with 130, TERM with 143, and a trapped USR1 leaves it
// running, printing. A session is interruptible although the adapter
// starts it in the background (a shell's background jobs ignore INT).
func TestSignals(t *testing.T) {
	t.Parallel()
	a := newAdapter(t)
	h := sandbox(t, a, "signals", nil)
	ctx := ctxFor(t, time.Minute)
	trapped := paddock.NewCmd("sh", "-c", `trap 'echo usr1' USR1; echo ready; while :; do sleep 0.05; done`)
	for _, c := range []struct {
		name string
		tty  bool
		sig  paddock.Signal
		code int
	}{{"INT", false, paddock.SignalInt, 130}, {"TERM", false, paddock.SignalTerm, 143}, {"INT on a terminal", true, paddock.SignalInt, 130}} {
		st, err := a.Spawn(ctx, h, trapped, paddock.SpawnOpts{TTY: c.tty})
		require.NoError(t, err, c.name)
		adaptertest.StdoutUntil(t, st, "ready", 30*time.Second)
		for range 2 {
			require.NoError(t, paddock.SignalCommand(ctx, a, st, paddock.SignalUsr1), c.name)
			adaptertest.StdoutUntil(t, st, "usr1", 30*time.Second)
		}
		require.NoError(t, paddock.SignalCommand(ctx, a, st, c.sig), c.name)
		_, _, last := adaptertest.Drain(t, st, 30*time.Second)
		require.Equal(t, paddock.Exit(c.code), last, c.name)
		require.ErrorIs(t, paddock.SignalCommand(ctx, a, st, paddock.SignalTerm), paddock.ErrCommandExited, c.name)
		require.NoError(t, st.Close())
	}
}

// A TTY session starts at the size asked for (80x24 without one), and a
// resize reaches it: stty size answers the new size.
func TestTerminalSize(t *testing.T) {
	t.Parallel()
	a := newAdapter(t)
	h := sandbox(t, a, "terminal-size", nil)
	ctx := ctxFor(t, time.Minute)
	sizeLoop := paddock.NewCmd("sh", "-c", `stty size; while read line; do stty size; done`)
	st, err := a.Spawn(ctx, h, sizeLoop, paddock.SpawnOpts{TTY: true, Stdin: true, Size: &paddock.TermSize{Cols: 132, Rows: 43}})
	require.NoError(t, err)
	defer st.Close()
	adaptertest.StdoutUntil(t, st, "43 132", 30*time.Second)
	require.NoError(t, paddock.ResizeTerminal(ctx, a, st, paddock.TermSize{Cols: 90, Rows: 20}))
	require.NoError(t, st.WriteStdin(ctx, []byte("size\n")))
	adaptertest.StdoutUntil(t, st, "20 90", 30*time.Second)
	require.NoError(t, st.CloseStdin(ctx))
	_, _, last := adaptertest.Drain(t, st, 30*time.Second)
	require.Equal(t, paddock.Exit(0), last)

	plain, err := a.Spawn(ctx, h, sizeLoop, paddock.SpawnOpts{TTY: true, Stdin: true})
	require.NoError(t, err)
	defer plain.Close()
	adaptertest.StdoutUntil(t, plain, "24 80", 30*time.Second)

	journaled, err := a.Spawn(ctx, h, paddock.NewCmd("sleep", "30"), paddock.SpawnOpts{})
	require.NoError(t, err)
	defer journaled.Close()
	require.ErrorIs(t, paddock.ResizeTerminal(ctx, a, journaled, paddock.TermSize{Cols: 80, Rows: 24}), paddock.ErrInvalid,
		"a command without a terminal")
}

// The file operations keep names exactly (spaces, newlines, quotes,
// leading dashes, globs, UTF-8), describe links as links with their
// targets, and answer what the sandbox user may not touch as invalid. A
// name that is not UTF-8 is refused: the engine's JSON API would change
// it.
func TestFileOperationsOnHostileNames(t *testing.T) {
	t.Parallel()
	a := newAdapter(t)
	h := sandbox(t, a, "file-names", nil)
	ctx := ctxFor(t, time.Minute)
	const dir = "/workspace/names"
	names := []string{"-rf", "a b", "line\nbreak", `q"uo'te$`, "é ü", "*"}
	require.NoError(t, paddock.MakeDir(ctx, a, h, dir, paddock.MakeDirOpts{Mode: 0o750}))
	for _, n := range names {
		require.NoError(t, a.WriteFile(ctx, h, dir+"/"+n, 0o644, strings.NewReader(n)), "%q", n)
	}
	out, code := execOut(t, a, h, "ln", "-s", "/etc/passwd", dir+"/link")
	require.Zero(t, code, out)
	entries, err := paddock.ListDir(ctx, a, h, dir)
	require.NoError(t, err)
	got := map[string]paddock.FileInfo{}
	for _, e := range entries {
		got[e.Name] = e
	}
	require.Len(t, got, len(names)+1)
	for _, n := range names {
		require.Contains(t, got, n)
		require.Equal(t, paddock.FileRegular, got[n].Type)
		require.EqualValues(t, len(n), got[n].Size)
	}
	require.Equal(t, paddock.FileSymlink, got["link"].Type)
	require.Equal(t, "/etc/passwd", got["link"].Target)
	info, err := paddock.Stat(ctx, a, h, dir)
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o750), info.Mode, "the mode asked for, past the umask")
	require.NoError(t, paddock.Rename(ctx, a, h, dir+"/line\nbreak", dir+"/-rf"), "a file replaces a file")
	require.NoError(t, paddock.Remove(ctx, a, h, dir+"/-rf", paddock.RemoveOpts{}))
	_, err = paddock.Stat(ctx, a, h, dir+"/line\nbreak")
	require.ErrorIs(t, err, paddock.ErrNotFound)
	require.ErrorIs(t, paddock.Remove(ctx, a, h, "/etc/passwd", paddock.RemoveOpts{}), paddock.ErrInvalid, "the sandbox user cannot")
	require.ErrorIs(t, paddock.MakeDir(ctx, a, h, "/etc/x", paddock.MakeDirOpts{}), paddock.ErrInvalid, "a read-only root")
	require.ErrorIs(t, a.WriteFile(ctx, h, dir+"/\xff\xfe", 0o644, strings.NewReader("x")), paddock.ErrInvalid)
	_, err = paddock.Stat(ctx, a, h, dir+"/\xff")
	require.ErrorIs(t, err, paddock.ErrInvalid)
	_, err = a.Exec(ctx, h, paddock.NewCmd("echo", "\xff"), paddock.ExecOpts{})
	require.ErrorIs(t, err, paddock.ErrInvalid)
	entries, err = paddock.ListDir(ctx, a, h, dir)
	require.NoError(t, err)
	require.Len(t, entries, len(names)-1, "two renamed or removed, the link added, nothing written under a changed name")
}

// What the sandbox's own commands do to a watched directory arrives in
// order (through paddock-watch inside the sandbox): a file created,
// written, renamed, removed; a directory made and removed; the watched
// directory removed ends the watch with not_found.
func TestWatchSeesTheSandboxsOwnChanges(t *testing.T) {
	t.Parallel()
	a := newAdapter(t)
	h := sandbox(t, a, "watched", nil)
	ctx := ctxFor(t, time.Minute)
	require.NoError(t, paddock.MakeDir(ctx, a, h, "/workspace/w", paddock.MakeDirOpts{}))
	w, err := paddock.Watch(ctx, a, h, "/workspace/w")
	require.NoError(t, err)
	defer w.Close()
	out, code := execOut(t, a, h, "sh", "-c", `cd /workspace/w && echo one > f && mv f g && rm g && mkdir d && rmdir d`)
	require.Zero(t, code, out)
	var got []paddock.FileEvent
	for len(got) < 7 {
		ev, err := w.Next(ctx)
		require.NoError(t, err, "after %v", got)
		if k := len(got); k > 0 && got[k-1] == ev && ev.Change == paddock.FileWritten {
			continue
		}
		got = append(got, ev)
	}
	require.Equal(t, []paddock.FileEvent{
		{Change: paddock.FileCreated, Path: "/workspace/w/f"},
		{Change: paddock.FileWritten, Path: "/workspace/w/f"},
		{Change: paddock.FileRenamed, Path: "/workspace/w/f"},
		{Change: paddock.FileCreated, Path: "/workspace/w/g"},
		{Change: paddock.FileRemoved, Path: "/workspace/w/g"},
		{Change: paddock.FileCreated, Path: "/workspace/w/d"},
		{Change: paddock.FileRemoved, Path: "/workspace/w/d"},
	}, got)
	require.NoError(t, paddock.Remove(ctx, a, h, "/workspace/w", paddock.RemoveOpts{Recursive: true}))
	_, err = w.Next(ctx)
	require.ErrorIs(t, err, paddock.ErrNotFound, "the watched directory is gone")

	_, err = paddock.Watch(ctx, a, h, "/workspace/absent")
	require.ErrorIs(t, err, paddock.ErrNotFound)
	without := newAdapter(t, func(c *docker.Config) { c.Helpers = false })
	require.False(t, without.Capabilities().Has(paddock.CapWatch), "watch only where the image has paddock-watch")
	_, err = paddock.Watch(ctx, without, h, "/workspace")
	require.ErrorIs(t, err, paddock.ErrNotSupported)
}

// A follower that dies mid-session (here killed; at the sandbox's process
// limit, a refused fork ends it) is replaced by one that starts where the
// delivered bytes end: every byte once, in order, and the recorded exit.
func TestAFollowerThatDiesIsReplaced(t *testing.T) {
	t.Parallel()
	a := newAdapter(t)
	h := sandbox(t, a, "refollow", nil)
	ctx := ctxFor(t, 5*time.Minute) // a hang bound past the stream's own (engineWait) on a loaded engine
	script := `for i in 0 1 2 3 4; do echo out$i; echo err$i >&2; done
until [ -e /tmp/go ]; do sleep 0.01; done
for i in 5 6 7 8 9; do echo out$i; echo err$i >&2; done
exit 3`
	st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", script), paddock.SpawnOpts{})
	require.NoError(t, err)
	defer st.Close()
	var stdout, stderr strings.Builder
	for !strings.Contains(stdout.String(), "out4\n") || !strings.Contains(stderr.String(), "err4\n") {
		ev, err := st.Next(ctx)
		require.NoError(t, err, "after stdout %q and stderr %q", stdout.String(), stderr.String())
		switch ev.Kind {
		case paddock.EventStdout:
			stdout.Write(ev.Data)
		case paddock.EventStderr:
			stderr.Write(ev.Data)
		default:
			t.Fatalf("ended early: %+v", ev)
		}
	}
	// The pattern does not match the killing shell's own command line.
	out, code := execOut(t, a, h, "sh", "-c", `n=0
for p in /proc/[0-9]*; do
  case "$(tr '\0' ' ' < $p/cmdline)" in *_pd_f""in=*) kill -9 "${p#/proc/}" && n=$((n+1));; esac
done 2>/dev/null
echo killed=$n`)
	require.Equal(t, 0, code, out)
	require.NotEqual(t, "killed=0\n", out, "a follower was there to kill")
	_, code = execOut(t, a, h, "touch", "/tmp/go")
	require.Equal(t, 0, code)
	rest, errRest, last := adaptertest.Drain(t, st, 5*time.Minute)
	require.Equal(t, "out0\nout1\nout2\nout3\nout4\nout5\nout6\nout7\nout8\nout9\n", stdout.String()+rest)
	require.Equal(t, "err0\nerr1\nerr2\nerr3\nerr4\nerr5\nerr6\nerr7\nerr8\nerr9\n", stderr.String()+errRest)
	require.Equal(t, paddock.Exit(3), last)
}

// A terminal session can be terminated and signalled as soon as Spawn
// returns: its pid is recorded before (CI once saw a force termination
// right after the spawn answer termination_unconfirmed).
func TestATerminalSessionIsAddressableOnceSpawned(t *testing.T) {
	t.Parallel()
	a := newAdapter(t)
	h := sandbox(t, a, "terminal-at-once", nil)
	ctx := ctxFor(t, 2*time.Minute)
	for i := range 10 {
		st, err := a.Spawn(ctx, h, paddock.NewCmd("sleep", "100"), paddock.SpawnOpts{TTY: true})
		require.NoError(t, err)
		if i%2 == 0 {
			require.NoError(t, st.(paddock.Signaller).Signal(ctx, paddock.SignalKill), "signal %d", i)
		} else {
			require.NoError(t, a.TerminateSession(ctx, h, st.SessionID(), paddock.TerminateOpts{Mode: paddock.TerminateForce}), "terminate %d", i)
		}
		_, _, last := adaptertest.Drain(t, st, time.Minute)
		require.Equal(t, paddock.Exit(137), last, "%d", i)
		require.NoError(t, st.Close())
	}
}
