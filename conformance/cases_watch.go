package conformance

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

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
