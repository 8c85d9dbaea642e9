package docker_test

import (
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/stretchr/testify/require"
)

// untilStdout reads until stdout holds want, passing over stderr (a shell
// reports a child's death by signal there).
func untilStdout(t testing.TB, st paddock.Stream, want string) {
	t.Helper()
	var got string
	ctx := ctxFor(t, 30*time.Second)
	for !strings.Contains(got, want) {
		ev, err := st.Next(ctx)
		require.NoError(t, err, "waiting for %q, got %q", want, got)
		require.Contains(t, []paddock.EventKind{paddock.EventStdout, paddock.EventStderr}, ev.Kind, "waiting for %q, got %v", want, ev)
		if ev.Kind == paddock.EventStdout {
			got += string(ev.Data)
		}
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
		untilStdout(t, st, "ready")
		for range 2 {
			require.NoError(t, paddock.SignalCommand(ctx, a, st, paddock.SignalUsr1), c.name)
			untilStdout(t, st, "usr1")
		}
		require.NoError(t, paddock.SignalCommand(ctx, a, st, c.sig), c.name)
		_, _, last := drain(t, st)
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
	untilStdout(t, st, "43 132")
	require.NoError(t, paddock.ResizeTerminal(ctx, a, st, paddock.TermSize{Cols: 90, Rows: 20}))
	require.NoError(t, st.WriteStdin(ctx, []byte("size\n")))
	untilStdout(t, st, "20 90")
	require.NoError(t, st.CloseStdin(ctx))
	_, _, last := drain(t, st)
	require.Equal(t, paddock.Exit(0), last)

	plain, err := a.Spawn(ctx, h, sizeLoop, paddock.SpawnOpts{TTY: true, Stdin: true})
	require.NoError(t, err)
	defer plain.Close()
	untilStdout(t, plain, "24 80")

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
	without := newAdapter(t, func(c *docker.Config) { c.Watch = false })
	require.False(t, without.Capabilities().Has(paddock.CapWatch), "watch only where the image has paddock-watch")
	_, err = paddock.Watch(ctx, without, h, "/workspace")
	require.ErrorIs(t, err, paddock.ErrNotSupported)
}
