package treecopy_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/treecopy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// entry is what a tree holds at one path: kind, mode, content's hash or
// link target, and modification time.
type entry struct {
	Kind, Mode, Data string
	Mod              time.Time
}

func describe(t *testing.T, root string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		require.NoError(t, err)
		e := entry{Mode: info.Mode().String(), Mod: info.ModTime()}
		switch {
		case d.IsDir():
			e.Kind = "dir"
		case d.Type()&fs.ModeSymlink != 0:
			e.Kind = "link"
			e.Data, err = os.Readlink(p)
			require.NoError(t, err)
			e.Mod = time.Time{} // a link's own time is not kept
		case d.Type().IsRegular():
			e.Kind = "file"
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			sum := sha256.Sum256(b)
			e.Data = hex.EncodeToString(sum[:])
		default:
			e.Kind = "other"
		}
		out[rel] = e
		return nil
	}))
	return out
}

// A copy holds every file, directory and link of the tree, with their
// modes, contents and times; a FIFO is left out and counted; the
// destination must not exist.
func TestCopyKeepsTheTree(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "src")
	must := func(err error) { t.Helper(); require.NoError(t, err) }
	must(os.MkdirAll(filepath.Join(src, "a/b"), 0o750))
	must(os.WriteFile(filepath.Join(src, "a/b/notes.txt"), []byte("hello"), 0o640))
	must(os.WriteFile(filepath.Join(src, "run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755))
	big := make([]byte, 5<<20+3)
	for i := range big {
		big[i] = byte(i * 31)
	}
	must(os.WriteFile(filepath.Join(src, "big.bin"), big, 0o600))
	must(os.WriteFile(filepath.Join(src, "empty"), nil, 0o444))
	must(os.Symlink("a/b/notes.txt", filepath.Join(src, "rel-link")))
	must(os.Symlink("/etc/hostname", filepath.Join(src, "abs-link")))
	must(os.Symlink("nowhere", filepath.Join(src, "dangling")))
	must(os.Mkdir(filepath.Join(src, "ro"), 0o755))
	must(os.WriteFile(filepath.Join(src, "ro/kept"), []byte("inside a read-only directory"), 0o644))
	must(os.Chmod(filepath.Join(src, "ro"), 0o555))
	must(os.Mkdir(filepath.Join(src, "sticky"), 0o1777))
	skipped := 0
	if mkfifo(filepath.Join(src, "fifo")) == nil {
		skipped = 1
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	must(os.Chtimes(filepath.Join(src, "a/b/notes.txt"), old, old))
	must(os.Chtimes(filepath.Join(src, "a"), old, old))

	want, err := treecopy.Measure(src)
	require.NoError(t, err)
	dst := filepath.Join(t.TempDir(), "dst")
	got, err := treecopy.Copy(src, dst)
	require.NoError(t, err)
	assert.Equal(t, want, got, "Measure counts what Copy copies")
	assert.Equal(t, treecopy.Stats{Files: 5, Dirs: 5, Links: 3, Skipped: skipped, Bytes: int64(len(big) + 5 + 18 + 28)}, got)

	before, after := describe(t, src), describe(t, dst)
	delete(before, "fifo")
	assert.Equal(t, before, after)
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(src, "ro"), 0o755); _ = os.Chmod(filepath.Join(dst, "ro"), 0o755) })

	_, err = treecopy.Copy(src, dst)
	require.ErrorIs(t, err, fs.ErrExist, "an existing destination is refused")
}
