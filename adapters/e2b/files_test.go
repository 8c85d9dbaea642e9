package e2b_test

import (
	"io"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/paddockhq/paddock/adapters/internal/filecheck"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A 256 MiB file goes up and comes back streamed both ways: the bytes are
// the same, and the heap of the whole process (adapter and e2btest
// together) never grows by 32 MiB. Not parallel: the heap is shared.
func TestFilesStreamBothWaysInBoundedMemory(t *testing.T) {
	const size = 256 << 20
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	res, err := filecheck.RoundTrip(size,
		func(r io.Reader) error { return a.WriteFile(ctxFor(t, 5*time.Minute), h, "/tmp/big.bin", 0o644, r) },
		func() (io.ReadCloser, error) { return a.ReadFile(ctxFor(t, 5*time.Minute), h, "/tmp/big.bin") })
	require.NoError(t, err)
	assert.Equal(t, int64(size), res.Read)
	assert.True(t, res.Same, "the same bytes came back")
	t.Logf("256 MiB round trip: heap in use grew by at most %.1f MiB", float64(res.HeapGrowth)/(1<<20))
	assert.Less(t, res.HeapGrowth, int64(32<<20), "streamed, never held whole")
}
