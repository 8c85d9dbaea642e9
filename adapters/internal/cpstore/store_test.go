package cpstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func fillWith(content string) func(string) (int64, error) {
	return func(data string) (int64, error) {
		if err := os.MkdirAll(data, 0o700); err != nil {
			return 0, err
		}
		return int64(len(content)), os.WriteFile(filepath.Join(data, "f"), []byte(content), 0o600)
	}
}

// Checkpoints are made whole, listed per sandbox oldest first, read back
// and deleted (an absent or malformed id: not found, and deleting it is
// success); a failed fill leaves nothing.
func TestCreateListGetDelete(t *testing.T) {
	t.Parallel()
	s, err := New(t.TempDir(), paddock.CheckpointLimits{}, zerolog.Nop())
	require.NoError(t, err)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	a1, err := s.Create(Record{Sandbox: "a", Checkpoint: paddock.Checkpoint{Comment: "first"}}, 0, fillWith("one"))
	require.NoError(t, err)
	b1, err := s.Create(Record{Sandbox: "b"}, 3, fillWith("two"))
	require.NoError(t, err)
	a2, err := s.Create(Record{Sandbox: "a"}, 5, fillWith("three"))
	require.NoError(t, err)
	_, err = s.Create(Record{Sandbox: "a"}, 1, func(string) (int64, error) { return 0, errors.New("disk full") })
	require.ErrorIs(t, err, paddock.ErrUnavailable, "a failure outside the taxonomy is unavailable")
	require.ErrorContains(t, err, "disk full")

	list, err := s.List("a")
	require.NoError(t, err)
	require.Len(t, list, 2, "the failed one is not there")
	assert.Equal(t, []string{a1.ID, a2.ID}, []string{list[0].ID, list[1].ID})
	assert.Equal(t, "first", list[0].Comment)
	assert.EqualValues(t, 3, list[0].Size)
	rec, data, err := s.Get("b", b1.ID)
	require.NoError(t, err)
	assert.Equal(t, "b", rec.Sandbox)
	got, err := os.ReadFile(filepath.Join(data, "f"))
	require.NoError(t, err)
	assert.Equal(t, "two", string(got))

	for _, id := range []string{"cp-000000000000000000000000", "../../etc", "", "cp-zz"} {
		_, _, err := s.Get("a", id)
		require.ErrorIs(t, err, paddock.ErrNotFound, id)
		require.NoError(t, s.Delete("a", id), id)
	}
	_, _, err = s.Get("a", b1.ID)
	require.ErrorIs(t, err, paddock.ErrNotFound, "another sandbox's checkpoint")
	require.NoError(t, s.Delete("a", b1.ID), "another sandbox's checkpoint is not there for a")
	_, _, err = s.Get("b", b1.ID)
	require.NoError(t, err, "and is left alone")
	require.NoError(t, s.Delete("a", a1.ID))
	_, _, err = s.Get("a", a1.ID)
	require.ErrorIs(t, err, paddock.ErrNotFound)
	entries, err := os.ReadDir(s.dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temporary left behind")
}

// The count and the bytes are bounded over every sandbox's checkpoints:
// one more is invalid(checkpoint_limit), and room comes back with a
// deletion.
func TestLimits(t *testing.T) {
	t.Parallel()
	s, err := New(t.TempDir(), paddock.CheckpointLimits{MaxCount: 2, MaxBytes: 10}, zerolog.Nop())
	require.NoError(t, err)
	first, err := s.Create(Record{Sandbox: "a"}, 4, fillWith("xxxx"))
	require.NoError(t, err)
	assert.EqualValues(t, 4, first.Size)
	_, err = s.Create(Record{Sandbox: "b"}, 7, fillWith("xxxxxxx"))
	require.ErrorIs(t, err, paddock.ErrInvalid)
	require.ErrorContains(t, err, paddock.DetailCheckpointLimit, "11 bytes")
	_, err = s.Create(Record{Sandbox: "b"}, 0, fillWith("xxxxxxx"))
	require.ErrorContains(t, err, paddock.DetailCheckpointLimit, "more written than expected is counted too")
	list, err := s.List("b")
	require.NoError(t, err)
	assert.Empty(t, list, "and left nothing")
	_, err = s.Create(Record{Sandbox: "b"}, 6, fillWith("xxxxxx"))
	require.NoError(t, err)
	_, err = s.Create(Record{Sandbox: "a"}, 0, fillWith(""))
	require.ErrorContains(t, err, paddock.DetailCheckpointLimit, "a third")
	require.NoError(t, s.Delete("a", first.ID))
	_, err = s.Create(Record{Sandbox: "a"}, 0, fillWith(""))
	require.NoError(t, err)

	_, err = New(t.TempDir(), paddock.CheckpointLimits{MaxCount: -1}, zerolog.Nop())
	require.ErrorIs(t, err, paddock.ErrInvalid)
}

// Reaping notes when a checkpoint's sandbox went, removes it once the
// retention has passed since, and forgets the note when a sandbox of that
// name is back; a negative retention keeps everything.
func TestReap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		retention time.Duration
		removed   int
	}{{time.Hour, 1}, {-1, 0}} {
		s, err := New(t.TempDir(), paddock.CheckpointLimits{Retention: tc.retention}, zerolog.Nop())
		require.NoError(t, err)
		clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		s.now = func() time.Time { return clock }
		gone, err := s.Create(Record{Sandbox: "gone"}, 1, fillWith("x"))
		require.NoError(t, err)
		back, err := s.Create(Record{Sandbox: "back"}, 1, fillWith("x"))
		require.NoError(t, err)
		_, err = s.Create(Record{Sandbox: "here"}, 1, fillWith("x"))
		require.NoError(t, err)
		alive := map[string]bool{"here": true}
		n, err := s.Reap(func(name string) bool { return alive[name] })
		require.NoError(t, err)
		assert.Zero(t, n, "just found gone")
		rec, _, err := s.Get("gone", gone.ID)
		require.NoError(t, err)
		assert.Equal(t, clock, rec.GoneSince)

		clock = clock.Add(30 * time.Minute)
		alive["back"] = true
		_, err = s.Reap(func(name string) bool { return alive[name] })
		require.NoError(t, err)
		rec, _, err = s.Get("back", back.ID)
		require.NoError(t, err)
		assert.True(t, rec.GoneSince.IsZero(), "its sandbox is back")

		clock = clock.Add(30 * time.Minute)
		n, err = s.Reap(func(name string) bool { return alive[name] })
		require.NoError(t, err)
		assert.Equal(t, tc.removed, n, "retention %v", tc.retention)
		_, _, err = s.Get("gone", gone.ID)
		if tc.removed == 1 {
			require.ErrorIs(t, err, paddock.ErrNotFound)
		} else {
			require.NoError(t, err)
		}
	}
}
