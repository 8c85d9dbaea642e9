package daytona_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/stretchr/testify/require"
)

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
