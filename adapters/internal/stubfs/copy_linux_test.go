package stubfs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A copy keeps what a disk snapshot keeps: contents, modes, owners (when
// the server may set them), links as links and user extended attributes.
func TestCopyTreeKeepsWhatADiskKeeps(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(src, "home/user/dir"), 0o750))
	file := filepath.Join(src, "home/user/dir/notes.txt")
	require.NoError(t, os.WriteFile(file, []byte("kept"), 0o600))
	require.NoError(t, os.Chmod(file, 0o640))
	require.NoError(t, os.Symlink("dir/notes.txt", filepath.Join(src, "home/user/link")))
	root := os.Geteuid() == 0
	if root {
		require.NoError(t, os.Lchown(file, 1000, 1000))
	}
	xattrs := unix.Lsetxattr(file, "user.e2b.kind", []byte("note"), 0) == nil

	dst := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, stubfs.CopyTree(src, dst))

	copied := filepath.Join(dst, "home/user/dir/notes.txt")
	data, err := os.ReadFile(copied)
	require.NoError(t, err)
	assert.Equal(t, "kept", string(data))
	info, err := os.Lstat(copied)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o640), info.Mode().Perm())
	dir, err := os.Lstat(filepath.Join(dst, "home/user/dir"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o750), dir.Mode().Perm())
	target, err := os.Readlink(filepath.Join(dst, "home/user/link"))
	require.NoError(t, err)
	assert.Equal(t, "dir/notes.txt", target)
	if root {
		uid, gid, ok := stubproc.Owner(info)
		require.True(t, ok)
		assert.Equal(t, [2]int{1000, 1000}, [2]int{uid, gid})
	}
	if xattrs {
		value := make([]byte, 64)
		n, err := unix.Lgetxattr(copied, "user.e2b.kind", value)
		require.NoError(t, err)
		assert.Equal(t, "note", string(value[:n]))
	}
}
