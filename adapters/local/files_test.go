//go:build unix

package local_test

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// snapshotTree records every file under dir with its content and mtime.
func snapshotTree(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		info, err := d.Info()
		require.NoError(t, err)
		content := ""
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			content = string(b)
		}
		out[p] = content + "|" + info.ModTime().String() + "|" + info.Mode().String()
		return nil
	}))
	return out
}

func TestPathEscapesAreRefused(t *testing.T) {
	t.Parallel()
	outside := t.TempDir() // the canary: nothing here may be read or written
	secret := filepath.Join(outside, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("outside-secret"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(outside, "dir"), 0o755))

	a := newLocal(t)
	h := box(t, a, "files")
	files := a.HostPath(h, "/")
	// Links an attacker inside the sandbox could have made.
	links := map[string]string{
		"to-secret":  secret,
		"to-outside": outside,
		"to-parent":  "..",
		"nested/up":  "../../..",
		"chain-a":    "chain-b",
		"chain-b":    outside,
		"rel-out":    "../../../../../../../../" + strings.TrimPrefix(outside, "/"),
	}
	for name, target := range links {
		p := filepath.Join(files, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.Symlink(target, p))
	}
	before := snapshotTree(t, outside)

	shapes := []string{
		"/../secret.txt",
		"/a/../../secret.txt",
		"/..",
		"/to-secret",
		"/to-outside/secret.txt",
		"/to-outside/dir/new.txt",
		"/to-parent/meta.json",
		"/nested/up/x",
		"/chain-a/secret.txt",
		"/rel-out/secret.txt",
	}
	for _, p := range shapes {
		t.Run(p, func(t *testing.T) {
			err := a.WriteFile(ctx, h, p, 0o644, strings.NewReader("pwned"))
			require.ErrorIs(t, err, paddock.ErrInvalid, "write %s", p)
			rc, err := a.ReadFile(ctx, h, p)
			if err == nil {
				b, _ := io.ReadAll(rc)
				rc.Close()
				require.Failf(t, "read outside the sandbox", "%s gave %q", p, b)
			}
			require.ErrorIs(t, err, paddock.ErrInvalid, "read %s", p)
		})
	}
	assert.Equal(t, before, snapshotTree(t, outside), "nothing outside the sandbox was written")
	_, err := a.ReadFile(ctx, h, "relative.txt")
	require.ErrorIs(t, err, paddock.ErrInvalid, "a relative path")

	// Links that stay inside are fine.
	require.NoError(t, os.Symlink("real", filepath.Join(files, "inside")))
	require.NoError(t, a.WriteFile(ctx, h, "/real/f.txt", 0o644, strings.NewReader("ok")))
	rc, err := a.ReadFile(ctx, h, "/inside/f.txt")
	require.NoError(t, err)
	b, _ := io.ReadAll(rc)
	rc.Close()
	assert.Equal(t, "ok", string(b))
}

func TestFilesAndHostPath(t *testing.T) {
	t.Parallel()
	a := newLocal(t)
	h := box(t, a, "fs")
	require.NoError(t, a.WriteFile(ctx, h, "/data/in.txt", 0o600, strings.NewReader("hello")))
	host := a.HostPath(h, "/data/in.txt")
	b, err := os.ReadFile(host)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b))
	info, err := os.Stat(host)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), info.Mode().Perm())

	out, _ := execOut(t, a, h, "cat data/in.txt; pwd")
	assert.Equal(t, "hello"+filepath.Dir(filepath.Dir(host))+"\n", out, "commands start in the sandbox's files")

	rc, err := a.ReadFile(ctx, h, host) // a HostPath is accepted as well
	require.NoError(t, err)
	rc.Close()
	_, err = a.ReadFile(ctx, h, "/data")
	require.ErrorIs(t, err, paddock.ErrInvalid, "a directory is not a file")
	_, err = a.ReadFile(ctx, h, "/missing")
	require.ErrorIs(t, err, paddock.ErrNotFound)
	_, err = a.ReadFile(ctx, a.BuildHandle("nope"), "/x")
	require.ErrorIs(t, err, paddock.ErrNotFound)

	big := bytes.Repeat([]byte("0123456789"), 1<<20)
	require.NoError(t, a.WriteFile(ctx, h, "/big", 0, bytes.NewReader(big)))
	rc, err = a.ReadFile(ctx, h, "/big")
	require.NoError(t, err)
	got, err := io.ReadAll(rc)
	require.NoError(t, err)
	rc.Close()
	assert.Equal(t, big, got)

	cctx, cancel := contextCancelled()
	defer cancel()
	require.Error(t, a.WriteFile(cctx, h, "/cancelled", 0o644, bytes.NewReader(big)))
}

// The file operations stay inside the sandbox: a symbolic link leading out
// is described as a link, never followed out; removing it removes the
// link, not its target.
func TestFileOperationsStayInside(t *testing.T) {
	t.Parallel()
	a := newLocal(t)
	h := box(t, a, "links")
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600))
	require.NoError(t, os.Symlink(outside, a.HostPath(h, "/out")))

	info, err := paddock.Stat(ctx, a, h, "/out")
	require.NoError(t, err)
	assert.Equal(t, paddock.FileSymlink, info.Type)
	assert.Equal(t, outside, info.Target)
	_, err = paddock.ListDir(ctx, a, h, "/out")
	require.ErrorIs(t, err, paddock.ErrInvalid, "listing through a link that leads out")
	_, err = paddock.Stat(ctx, a, h, "/out/secret")
	require.ErrorIs(t, err, paddock.ErrInvalid)
	require.ErrorIs(t, paddock.Remove(ctx, a, h, "/out/secret", paddock.RemoveOpts{}), paddock.ErrInvalid)
	require.ErrorIs(t, paddock.Rename(ctx, a, h, "/out/secret", "/stolen"), paddock.ErrInvalid)
	require.ErrorIs(t, paddock.MakeDir(ctx, a, h, "/out/new", paddock.MakeDirOpts{}), paddock.ErrInvalid)

	entries, err := paddock.ListDir(ctx, a, h, "/")
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "out", entries[0].Name)

	require.NoError(t, paddock.Remove(ctx, a, h, "/out", paddock.RemoveOpts{Recursive: true}))
	_, err = os.Stat(filepath.Join(outside, "secret"))
	require.NoError(t, err, "removing the link leaves its target")
	require.NoError(t, paddock.MakeDir(ctx, a, h, "/made", paddock.MakeDirOpts{Mode: 0o700}))
	info, err = paddock.Stat(ctx, a, h, "/made")
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), info.Mode, "the mode, past the umask")
}
