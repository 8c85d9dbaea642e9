package daytona_test

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Exec through /process/execute: stdout and stderr apart (or merged), the
// real exit code, bytes exact (NUL, no newline, invalid UTF-8), argv
// quoted exactly, environment and directory, the deadline.
func TestExec(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)

	res, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", "printf 'to stdout'; printf 'to stderr' >&2; exit 4"), paddock.ExecOpts{})
	require.NoError(t, err)
	assert.Equal(t, "to stdout", string(res.Stdout))
	assert.Equal(t, "to stderr", string(res.Stderr))
	assert.Equal(t, 4, res.ExitCode)

	res, err = a.Exec(ctx, h, paddock.NewCmd("sh", "-c", "printf 'a'; printf 'b' >&2; printf 'c'"), paddock.ExecOpts{StderrToStdout: true})
	require.NoError(t, err)
	assert.Equal(t, "abc", string(res.Stdout))
	assert.Empty(t, res.Stderr)

	res, err = a.Exec(ctx, h, paddock.NewCmd("printf", `a\000b\377`), paddock.ExecOpts{})
	require.NoError(t, err)
	assert.Equal(t, "a\x00b\xff", string(res.Stdout), "bytes exact")

	args := []string{"it's", "two words", "$HOME", `back\slash`, "new\nline", ""}
	cmd := paddock.NewCmd("sh", append([]string{"-c", `for a do printf '%s|' "$a"; done; printf '%s|%s' "$X" "$(pwd)"`, "sh"}, args...)...)
	cmd.Env = []paddock.EnvVar{{Name: "X", Value: "y z'"}}
	cmd.Dir = "/tmp"
	res, err = a.Exec(ctx, h, cmd, paddock.ExecOpts{})
	require.NoError(t, err)
	assert.Contains(t, string(res.Stdout), "it's|two words|$HOME|back\\slash|new\nline||y z'|")
	var sent map[string]any
	reqs := srv.Requests()
	for _, r := range reqs {
		if r.Route == "TOOLBOX POST /process/execute" {
			sent = nil
			require.NoError(t, json.Unmarshal([]byte(r.Body), &sent))
		}
	}
	assert.Equal(t, map[string]any{"X": "y z'"}, sent["envs"], "the environment in the daemon's own field, envs")
	assert.NotContains(t, sent, "env")

	res, err = a.Exec(ctx, h, paddock.NewCmd("cat"), paddock.ExecOpts{})
	require.NoError(t, err, "a command reading stdin gets EOF, never the script")
	assert.Empty(t, res.Stdout)

	began := time.Now()
	_, err = a.Exec(ctx, h, paddock.NewCmd("sleep", "600"), paddock.ExecOpts{Timeout: paddock.Duration(1500 * time.Millisecond)})
	require.ErrorIs(t, err, paddock.ErrExecTimeout)
	assert.Less(t, time.Since(began), 5*time.Minute, "the deadline ended it, not the command's ten minutes")

	_, err = a.Exec(ctx, h, paddock.NewCmd("echo", "\xff"), paddock.ExecOpts{})
	require.ErrorIs(t, err, paddock.ErrInvalid)
	_, err = a.Exec(ctx, a.BuildHandle("absent"), paddock.NewCmd("true"), paddock.ExecOpts{})
	require.ErrorIs(t, err, paddock.ErrNotFound)

	// A stopped sandbox is started first.
	require.NoError(t, a.Suspend(ctx, h))
	res, err = a.Exec(ctx, h, paddock.NewCmd("true"), paddock.ExecOpts{})
	require.NoError(t, err)
	assert.Zero(t, res.ExitCode)
	assert.Equal(t, "started", srv.State("box"))
}

// The follow's frames cut the journal anywhere, markers included: at one,
// two, three and seven bytes a frame, each stream still gets exactly its
// bytes (NUL, no final newline, invalid UTF-8 kept) and the real exit.
func TestSpawnFollowsFramesCutAnywhere(t *testing.T) {
	t.Parallel()
	for _, size := range []int{1, 2, 3, 7} {
		srv := daytonatest.NewServer(t, fastFollow(), daytonatest.WithFrameSize(size))
		a := newAdapter(t, srv)
		h, err := a.Create(ctx, "box", paddock.CreateOpts{})
		require.NoError(t, err)
		st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", `printf 'a\000b'; printf 'e1\n' >&2; printf '\377 no newline'; printf e2 >&2; exit 6`), paddock.SpawnOpts{})
		require.NoError(t, err)
		got, err := adaptertest.Summary(t, st, time.Minute)
		require.NoError(t, err, "frames of %d", size)
		assert.Equal(t, "a\x00b\xff no newline|e1\ne2|6", got, "frames of %d", size)
		require.NoError(t, st.Close())
	}
}

// countRoute counts the toolbox requests of one route.
func countRoute(srv *daytonatest.Server, route string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Route == route {
			n++
		}
	}
	return n
}

// Where the daemon's file routes differ from the contract the adapter
// keeps the contract: an empty directory is removed without Recursive
// (the daemon refuses any directory without it), a rename replaces a file
// at the destination (the daemon answers 409), and a new directory has
// the mode asked for exactly (the daemon's umask would clear group write).
func TestFileOperationsOverTheToolbox(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)

	require.NoError(t, paddock.MakeDir(ctx, a, h, "/tmp/shared", paddock.MakeDirOpts{Mode: 0o775}))
	info, err := paddock.Stat(ctx, a, h, "/tmp/shared")
	require.NoError(t, err)
	require.Equal(t, paddock.FileDir, info.Type)
	require.Equal(t, fs.FileMode(0o775), info.Mode)
	require.Equal(t, 1, countRoute(srv, "TOOLBOX POST /files/permissions"), "the mode is set after the umask")

	require.NoError(t, paddock.Remove(ctx, a, h, "/tmp/shared", paddock.RemoveOpts{}), "an empty directory")
	_, err = paddock.Stat(ctx, a, h, "/tmp/shared")
	require.ErrorIs(t, err, paddock.ErrNotFound)

	require.NoError(t, a.WriteFile(ctx, h, "/tmp/a.txt", 0o644, strings.NewReader("new")))
	require.NoError(t, a.WriteFile(ctx, h, "/tmp/b.txt", 0o644, strings.NewReader("old")))
	require.NoError(t, paddock.Rename(ctx, a, h, "/tmp/a.txt", "/tmp/b.txt"), "a file at the destination is replaced")
	entries, err := paddock.ListDir(ctx, a, h, "/tmp")
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	require.NotContains(t, names, "a.txt")
	require.Contains(t, names, "b.txt")
	rc, err := a.ReadFile(ctx, h, "/tmp/b.txt")
	require.NoError(t, err)
	got := make([]byte, 8)
	n, _ := rc.Read(got)
	require.NoError(t, rc.Close())
	require.Equal(t, "new", string(got[:n]))

	require.NoError(t, paddock.MakeDir(ctx, a, h, "/tmp/dir", paddock.MakeDirOpts{}))
	require.ErrorIs(t, paddock.Rename(ctx, a, h, "/tmp/b.txt", "/tmp/dir"), paddock.ErrInvalid, "a directory is in the way")
}

// A 256 MiB file goes up and comes back streamed both ways: the bytes are
// the same, and the heap of the whole process (adapter and daytonatest
// together) never grows by 32 MiB. Not parallel: the heap is shared.
func TestFilesStreamBothWaysInBoundedMemory(t *testing.T) {
	srv := daytonatest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	adaptertest.StreamsFiles(t, ctx, a, h, "/tmp/big.bin")
}

// A mode other than the daemon's 0644 is set with chmod; an absent file is
// not found, a directory invalid; parents are made.
func TestFileModesAndAnswers(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	require.NoError(t, a.WriteFile(ctx, h, "/tmp/deep/run.sh", 0o755, strings.NewReader("#!/bin/sh\necho ran\n")))
	res, err := a.Exec(ctx, h, paddock.NewCmd("/tmp/deep/run.sh"), paddock.ExecOpts{})
	require.NoError(t, err)
	assert.Equal(t, "ran\n", string(res.Stdout), "made with its parents, executable")
	_, err = a.ReadFile(ctx, h, "/tmp/absent")
	require.ErrorIs(t, err, paddock.ErrNotFound)
	_, err = a.ReadFile(ctx, h, "/tmp/deep")
	require.ErrorIs(t, err, paddock.ErrInvalid)
	require.ErrorIs(t, a.WriteFile(ctx, h, "relative", 0o644, strings.NewReader("x")), paddock.ErrInvalid)
}
