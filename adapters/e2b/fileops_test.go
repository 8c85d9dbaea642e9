package e2b_test

import (
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/stretchr/testify/require"
)

// The file operations on envd's Filesystem service keep the contract
// where envd differs: Remove of an absent path is not_found and of a
// directory with entries invalid (envd's Remove is quiet and recursive);
// MakeDir without Parents needs the parent (envd's makes them) and sets
// the mode asked for; a link is described as a link, with the target envd
// resolves.
func TestFileOperationsOverEnvd(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	c := ctxFor(t, 2*time.Minute) // one budget for the whole sequence: CI's load once took it past 30 s

	require.ErrorIs(t, paddock.MakeDir(c, a, h, "/home/user/none/d", paddock.MakeDirOpts{}), paddock.ErrNotFound)
	require.NoError(t, paddock.MakeDir(c, a, h, "/home/user/d", paddock.MakeDirOpts{Mode: 0o700}))
	info, err := paddock.Stat(c, a, h, "/home/user/d")
	require.NoError(t, err)
	require.Equal(t, paddock.FileDir, info.Type)
	require.Equal(t, fs.FileMode(0o700), info.Mode)
	require.NoError(t, a.WriteFile(c, h, "/home/user/d/f.txt", 0o644, strings.NewReader("hello")))
	require.ErrorIs(t, paddock.MakeDir(c, a, h, "/home/user/d/f.txt", paddock.MakeDirOpts{Parents: true}), paddock.ErrAlreadyExists,
		"a file is in the way")

	res, err := a.Exec(c, h, paddock.NewCmd("ln", "-s", "/home/user/d/f.txt", "/home/user/d/link"), paddock.ExecOpts{})
	require.NoError(t, err)
	require.Zero(t, res.ExitCode, string(res.Stderr))
	entries, err := paddock.ListDir(c, a, h, "/home/user/d")
	require.NoError(t, err)
	require.Len(t, entries, 2)
	require.Equal(t, "f.txt", entries[0].Name)
	require.EqualValues(t, 5, entries[0].Size)
	require.Equal(t, paddock.FileSymlink, entries[1].Type)
	require.Equal(t, "/home/user/d/f.txt", entries[1].Target)

	require.ErrorIs(t, paddock.Remove(c, a, h, "/home/user/d", paddock.RemoveOpts{}), paddock.ErrInvalid)
	require.ErrorIs(t, paddock.Remove(c, a, h, "/home/user/absent", paddock.RemoveOpts{}), paddock.ErrNotFound)
	require.NoError(t, paddock.Rename(c, a, h, "/home/user/d", "/home/user/e"))
	require.NoError(t, paddock.Remove(c, a, h, "/home/user/e", paddock.RemoveOpts{Recursive: true}))
	_, err = paddock.Stat(c, a, h, "/home/user/e/f.txt")
	require.ErrorIs(t, err, paddock.ErrNotFound)
}
