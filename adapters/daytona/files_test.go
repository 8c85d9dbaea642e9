package daytona_test

import (
	"io"
	"strings"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/paddockhq/paddock/adapters/internal/filecheck"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A 256 MiB file goes up and comes back streamed both ways: the bytes are
// the same, and the heap of the whole process (adapter and daytonatest
// together) never grows by 32 MiB. Not parallel: the heap is shared.
func TestFilesStreamBothWaysInBoundedMemory(t *testing.T) {
	const size = 256 << 20
	srv := daytonatest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	res, err := filecheck.RoundTrip(size,
		func(r io.Reader) error { return a.WriteFile(ctx, h, "/tmp/big.bin", 0o644, r) },
		func() (io.ReadCloser, error) { return a.ReadFile(ctx, h, "/tmp/big.bin") })
	require.NoError(t, err)
	assert.Equal(t, int64(size), res.Read)
	assert.True(t, res.Same, "the same bytes came back")
	t.Logf("256 MiB round trip: heap in use grew by at most %.1f MiB", float64(res.HeapGrowth)/(1<<20))
	assert.Less(t, res.HeapGrowth, int64(32<<20), "streamed, never held whole")
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
