package conformance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

// bigFileSize is the payload that must stream through intact.
const bigFileSize = 4 << 20

// 21. Files written are read back byte for byte; parent directories are
// created; 4 MiB streams through intact; an absent file is not_found; a
// path with .., a relative one, one with a NUL byte or a name past
// MaxNameLen is invalid.
func filesRoundTrip(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)

	small := []byte("hello, file\n")
	require.NoError(t, s.a.WriteFile(ctx, h, "/tmp/conformance/small.txt", 0o644, bytes.NewReader(small)))
	require.Equal(t, small, readAll(t, s, h, "/tmp/conformance/small.txt"))

	deep := "/tmp/conformance/a/b/c/deep.txt"
	require.NoError(t, s.a.WriteFile(ctx, h, deep, 0o600, bytes.NewReader([]byte("deep"))), "parents are created")
	require.Equal(t, []byte("deep"), readAll(t, s, h, deep))

	require.NoError(t, s.a.WriteFile(ctx, h, "/tmp/conformance/small.txt", 0o644, bytes.NewReader([]byte("new"))))
	require.Equal(t, []byte("new"), readAll(t, s, h, "/tmp/conformance/small.txt"), "a write replaces the file")

	want := sha256.New()
	src := io.TeeReader(io.LimitReader(rand.NewChaCha8([32]byte{7}), bigFileSize), want)
	require.NoError(t, s.a.WriteFile(ctx, h, "/tmp/conformance/big.bin", 0o644, src))
	rc, err := s.a.ReadFile(ctx, h, "/tmp/conformance/big.bin")
	require.NoError(t, err)
	got := sha256.New()
	n, err := io.Copy(got, rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	require.EqualValues(t, bigFileSize, n)
	require.Equal(t, want.Sum(nil), got.Sum(nil), "4 MiB read back intact")

	_, err = s.a.ReadFile(ctx, h, "/tmp/conformance/absent.txt")
	requireKind(t, err, paddock.ErrNotFound, "ReadFile of an absent file")

	// One path rule on every adapter, before the provider sees the path.
	for _, bad := range []string{"/tmp/conformance/../../etc/passwd", "tmp/relative", "/tmp/a\x00b", "/tmp/" + strings.Repeat("n", paddock.MaxNameLen+1)} {
		_, err = s.a.ReadFile(ctx, h, bad)
		requireKind(t, err, paddock.ErrInvalid, "ReadFile(%q)", bad)
		err = s.a.WriteFile(ctx, h, bad, 0o644, bytes.NewReader([]byte("x")))
		requireKind(t, err, paddock.ErrInvalid, "WriteFile(%q)", bad)
	}
}

func readAll(t testing.TB, s *suite, h paddock.Handle, path string) []byte {
	t.Helper()
	rc, err := s.a.ReadFile(s.ctx(t), h, path)
	require.NoError(t, err, "ReadFile(%s)", path)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return b
}

// 29. The file operations: a directory made with its parents is listed
// with its entries' types, sizes and modes, sorted by name; Stat describes
// one file; Rename moves a file and a directory; Remove refuses a
// directory with entries unless recursive; absence is not_found and a
// climbing path invalid.
func fileOperations(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	const root = "/tmp/conformance-files"

	require.NoError(t, paddock.MakeDir(ctx, s.a, h, root+"/a/b", paddock.MakeDirOpts{Parents: true}))
	require.NoError(t, paddock.MakeDir(ctx, s.a, h, root+"/a/b", paddock.MakeDirOpts{Parents: true}), "parents accepts an existing directory")
	requireKind(t, paddock.MakeDir(ctx, s.a, h, root+"/a/b", paddock.MakeDirOpts{}), paddock.ErrAlreadyExists, "MakeDir of an existing directory")
	requireKind(t, paddock.MakeDir(ctx, s.a, h, root+"/none/c", paddock.MakeDirOpts{}), paddock.ErrNotFound, "MakeDir without its parent")
	require.NoError(t, s.a.WriteFile(ctx, h, root+"/a/one.txt", 0o640, bytes.NewReader([]byte("one"))))
	require.NoError(t, s.a.WriteFile(ctx, h, root+"/a/two.txt", 0o644, bytes.NewReader([]byte("two!"))))

	entries, err := paddock.ListDir(ctx, s.a, h, root+"/a")
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
		require.Equal(t, root+"/a/"+e.Name, e.Path)
	}
	require.Equal(t, []string{"b", "one.txt", "two.txt"}, names, "sorted by name")
	require.Equal(t, paddock.FileDir, entries[0].Type)
	require.Equal(t, paddock.FileRegular, entries[1].Type)
	require.EqualValues(t, 3, entries[1].Size)
	require.Equal(t, fs.FileMode(0o640), entries[1].Mode)
	require.False(t, entries[1].ModTime.IsZero(), "a modification time")

	info, err := paddock.Stat(ctx, s.a, h, root+"/a/two.txt")
	require.NoError(t, err)
	require.Equal(t, "two.txt", info.Name)
	require.EqualValues(t, 4, info.Size)
	_, err = paddock.Stat(ctx, s.a, h, root+"/a/absent")
	requireKind(t, err, paddock.ErrNotFound, "Stat of an absent file")
	_, err = paddock.ListDir(ctx, s.a, h, root+"/absent")
	requireKind(t, err, paddock.ErrNotFound, "ListDir of an absent directory")
	_, err = paddock.ListDir(ctx, s.a, h, root+"/a/one.txt")
	requireKind(t, err, paddock.ErrInvalid, "ListDir of a file")
	_, err = paddock.Stat(ctx, s.a, h, root+"/a/../../etc")
	requireKind(t, err, paddock.ErrInvalid, "a path with ..")

	require.NoError(t, paddock.Rename(ctx, s.a, h, root+"/a/one.txt", root+"/a/b/moved.txt"))
	require.Equal(t, []byte("one"), readAll(t, s, h, root+"/a/b/moved.txt"))
	_, err = paddock.Stat(ctx, s.a, h, root+"/a/one.txt")
	requireKind(t, err, paddock.ErrNotFound, "the old name is gone")
	require.NoError(t, paddock.Rename(ctx, s.a, h, root+"/a/b", root+"/c"), "a directory moves with its entries")
	require.Equal(t, []byte("one"), readAll(t, s, h, root+"/c/moved.txt"))
	requireKind(t, paddock.Rename(ctx, s.a, h, root+"/absent", root+"/x"), paddock.ErrNotFound, "Rename of an absent file")
	requireKind(t, paddock.Rename(ctx, s.a, h, root+"/c", root+"/c/inside"), paddock.ErrInvalid, "a directory into itself")

	requireKind(t, paddock.Remove(ctx, s.a, h, root+"/c", paddock.RemoveOpts{}), paddock.ErrInvalid, "a directory with entries")
	require.NoError(t, paddock.Remove(ctx, s.a, h, root+"/a/two.txt", paddock.RemoveOpts{}))
	require.NoError(t, paddock.Remove(ctx, s.a, h, root+"/c", paddock.RemoveOpts{Recursive: true}))
	_, err = paddock.Stat(ctx, s.a, h, root+"/c/moved.txt")
	requireKind(t, err, paddock.ErrNotFound, "removed with its directory")
	requireKind(t, paddock.Remove(ctx, s.a, h, root+"/c", paddock.RemoveOpts{}), paddock.ErrNotFound, "Remove of an absent file")
	entries, err = paddock.ListDir(ctx, s.a, h, root+"/a")
	require.NoError(t, err)
	require.Empty(t, entries, "an empty directory lists nothing")
}

// 29 refused. Without files each operation is not supported.
func fileOperationsRefused(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	_, err := paddock.ListDir(ctx, s.a, h, "/tmp")
	requireKind(t, err, paddock.ErrNotSupported, "ListDir")
	_, err = paddock.Stat(ctx, s.a, h, "/tmp")
	requireKind(t, err, paddock.ErrNotSupported, "Stat")
	requireKind(t, paddock.Remove(ctx, s.a, h, "/tmp/x", paddock.RemoveOpts{}), paddock.ErrNotSupported, "Remove")
	requireKind(t, paddock.Rename(ctx, s.a, h, "/tmp/x", "/tmp/y"), paddock.ErrNotSupported, "Rename")
	requireKind(t, paddock.MakeDir(ctx, s.a, h, "/tmp/x", paddock.MakeDirOpts{}), paddock.ErrNotSupported, "MakeDir")
}

// 32. With watch (and files): a watch reports, in order, a file created
// and written, renamed (the old path, then the new one created) and
// removed, and nothing of a subdirectory's entries; an absent directory is
// not_found, a file invalid; after Close the watch answers io.EOF.
func watchReportsChanges(t testing.TB, s *suite) {
	require.True(t, s.caps.Has(paddock.CapFiles), "the watch case changes files with the file operations")
	ctx := s.ctx(t)
	h := s.fresh(t)
	const dir = "/tmp/conformance-watch"
	require.NoError(t, paddock.MakeDir(ctx, s.a, h, dir+"/sub", paddock.MakeDirOpts{Parents: true}))
	require.NoError(t, s.a.WriteFile(ctx, h, dir+"/plain.txt", 0o644, bytes.NewReader([]byte("x"))))
	_, err := paddock.Watch(ctx, s.a, h, dir+"/absent")
	requireKind(t, err, paddock.ErrNotFound, "Watch of an absent directory")
	_, err = paddock.Watch(ctx, s.a, h, dir+"/plain.txt")
	requireKind(t, err, paddock.ErrInvalid, "Watch of a file")
	_, err = paddock.Watch(ctx, s.a, h, dir+"/../etc")
	requireKind(t, err, paddock.ErrInvalid, "a path with ..")

	w, err := paddock.Watch(ctx, s.a, h, dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	require.NoError(t, s.a.WriteFile(ctx, h, dir+"/sub/inner.txt", 0o644, bytes.NewReader([]byte("not reported"))))
	require.NoError(t, s.a.WriteFile(ctx, h, dir+"/a.txt", 0o644, bytes.NewReader([]byte("one"))))
	require.NoError(t, paddock.Rename(ctx, s.a, h, dir+"/a.txt", dir+"/b.txt"))
	require.NoError(t, paddock.Remove(ctx, s.a, h, dir+"/b.txt", paddock.RemoveOpts{}))

	want := []paddock.FileEvent{
		{Change: paddock.FileCreated, Path: dir + "/a.txt"},
		{Change: paddock.FileWritten, Path: dir + "/a.txt"},
		{Change: paddock.FileRenamed, Path: dir + "/a.txt"},
		{Change: paddock.FileCreated, Path: dir + "/b.txt"},
		{Change: paddock.FileRemoved, Path: dir + "/b.txt"},
	}
	var got []paddock.FileEvent
	for len(got) < len(want) {
		ev, err := s.nextChange(t, w)
		require.NoError(t, err, "waiting for %v, got %v", want, got)
		require.True(t, ev.Change.Known(), "a change of the contract's four: %v", ev)
		if n := len(got); n > 0 && got[n-1] == ev && ev.Change == paddock.FileWritten {
			continue // a write reported twice is one write
		}
		got = append(got, ev)
	}
	require.Equal(t, want, got)
	require.NoError(t, w.Close())
	_, err = w.Next(s.ctx(t))
	require.ErrorIs(t, err, io.EOF, "after Close")
}

// 32 refused. Without watch, Watch is not supported.
func watchRefused(t testing.TB, s *suite) {
	_, err := paddock.Watch(s.ctx(t), s.a, s.fresh(t), "/tmp")
	requireKind(t, err, paddock.ErrNotSupported)
}

// nextChange waits up to FrameTimeout for a watch's next change.
func (s *suite) nextChange(t testing.TB, w paddock.FileWatch) (paddock.FileEvent, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.FrameTimeout)
	defer cancel()
	return w.Next(ctx)
}

// cutSource yields size pseudo-random bytes, then fails with err (nil:
// ends); at is called once, when the bytes run out.
type cutSource struct {
	r   io.Reader
	at  func()
	err error
}

func newCutSource(size int64, at func(), err error) *cutSource {
	return &cutSource{r: io.LimitReader(rand.NewChaCha8([32]byte{33}), size), at: at, err: err}
}

func (c *cutSource) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		if c.at != nil {
			c.at()
			c.at = nil
		}
		if c.err == nil {
			return n, io.EOF
		}
		return n, c.err
	}
	return n, err
}

// errSourceBroke is the failure of the caller's reader in case 33.
var errSourceBroke = errors.New("conformance: the caller's reader broke")

// 33. WriteFile is all or nothing: a write whose reader fails after more
// than a megabyte answers that failure (invalid, wrapping it) and leaves
// the file as it was, or absent when there was none; a reader's typed
// error (a caller's own cap) is the answer as it is, never transient; a
// write whose context ends midway either fails and leaves the old content,
// or succeeds whole. With `files`, no staging file is left beside them.
func writeIsAllOrNothing(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	const dir, size = "/tmp/conformance-cut", 1<<20 + 7
	kept, absent := dir+"/kept.txt", dir+"/absent.txt"
	old := []byte("the old content\n")
	require.NoError(t, s.a.WriteFile(ctx, h, kept, 0o644, bytes.NewReader(old)))

	err := s.a.WriteFile(ctx, h, kept, 0o644, newCutSource(size, nil, errSourceBroke))
	requireKind(t, err, paddock.ErrInvalid, "a write whose reader failed")
	require.ErrorIs(t, err, errSourceBroke, "the answer wraps the reader's failure")
	require.Equal(t, old, readAll(t, s, h, kept), "a failed write leaves the old content")

	err = s.a.WriteFile(ctx, h, absent, 0o644, newCutSource(size, nil, errSourceBroke))
	requireKind(t, err, paddock.ErrInvalid, "a write of a new file whose reader failed")
	_, err = s.a.ReadFile(ctx, h, absent)
	requireKind(t, err, paddock.ErrNotFound, "a failed write of a new file leaves none")

	tooLarge := fmt.Errorf("%w: the caller's own cap", paddock.ErrFileTooLarge)
	err = s.a.WriteFile(ctx, h, kept, 0o644, newCutSource(size, nil, tooLarge))
	requireKind(t, err, paddock.ErrFileTooLarge, "a reader's typed failure is the answer")
	require.False(t, paddock.IsTransient(err), "a file over a cap is not transient")
	require.Equal(t, old, readAll(t, s, h, kept))

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	want := sha256.New()
	src := io.TeeReader(io.MultiReader(newCutSource(size, cancel, nil), io.LimitReader(rand.NewChaCha8([32]byte{34}), size)), want)
	err = s.a.WriteFile(cctx, h, kept, 0o644, src)
	got := readAll(t, s, h, kept)
	if err != nil {
		require.Equal(t, old, got, "a write whose context ended and that failed leaves the old content (%v)", err)
	} else {
		sum := sha256.Sum256(got)
		require.Equal(t, want.Sum(nil), sum[:], "a write whose context ended and that succeeded wrote every byte")
	}

	entries, err := paddock.ListDir(ctx, s.a, h, dir)
	if errors.Is(err, paddock.ErrNotSupported) {
		return
	}
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	require.Equal(t, []string{"kept.txt"}, names, "no staging file is left")
}
