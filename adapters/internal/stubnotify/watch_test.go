//go:build linux

package stubnotify_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubnotify"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// next is the watch's next change, within a hang bound. A write may come
// as more than one (a truncation, then the data): writes beyond the first
// are passed over when something else is awaited.
func next(t *testing.T, w *stubnotify.Watch, want ...stubnotify.Kind) stubnotify.Change {
	t.Helper()
	for {
		select {
		case c, ok := <-w.Events():
			require.True(t, ok, "the watch ended")
			if c.Kind == stubnotify.Write && len(want) > 0 && want[0] != stubnotify.Write {
				continue
			}
			return c
		case <-time.After(time.Minute):
			t.Fatal("no change within a minute")
		}
	}
}

func TestAWatchNamesEachChangeAsFsnotifyDoes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	w, err := stubnotify.Start(dir, true)
	require.NoError(t, err)
	defer w.Close()
	f := filepath.Join(dir, "sub", "a")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	require.Equal(t, stubnotify.Change{Name: "sub/a", Kind: stubnotify.Create}, next(t, w))
	require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
	require.Equal(t, stubnotify.Change{Name: "sub/a", Kind: stubnotify.Write}, next(t, w))
	require.NoError(t, os.Chmod(f, 0o600))
	require.Equal(t, stubnotify.Change{Name: "sub/a", Kind: stubnotify.Chmod}, next(t, w, stubnotify.Chmod))
	require.NoError(t, os.Rename(f, filepath.Join(dir, "b")))
	require.Equal(t, stubnotify.Change{Name: "sub/a", Kind: stubnotify.Rename}, next(t, w, stubnotify.Rename))
	require.Equal(t, stubnotify.Change{Name: "b", Kind: stubnotify.Create}, next(t, w))
	require.NoError(t, os.Remove(filepath.Join(dir, "b")))
	require.Equal(t, stubnotify.Change{Name: "b", Kind: stubnotify.Remove}, next(t, w))
	require.Equal(t, "remove", stubnotify.Remove.String())
}

func TestAWatchedFileIsWatchedAlone(t *testing.T) {
	t.Parallel()
	f := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	w, err := stubnotify.Start(f, false)
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
	require.Equal(t, stubnotify.Change{Kind: stubnotify.Write}, next(t, w))
	require.NoError(t, os.Remove(f))
	var last stubnotify.Change
	for c := range w.Events() { // a chmod of the link count, then the removal, then the end
		last = c
	}
	require.Equal(t, stubnotify.Change{Kind: stubnotify.Remove}, last)
}

func TestCloseEndsTheEvents(t *testing.T) {
	t.Parallel()
	w, err := stubnotify.Start(t.TempDir(), false)
	require.NoError(t, err)
	w.Close()
	for range w.Events() {
	}
	_, err = stubnotify.Start(filepath.Join(t.TempDir(), "absent"), false)
	require.Error(t, err)
}
