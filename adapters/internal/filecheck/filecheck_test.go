package filecheck_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/filecheck"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A store that keeps the bytes is the same; one that changes a byte is
// not; one that holds the whole file shows in the heap.
func TestRoundTrip(t *testing.T) {
	const size = 8 << 20
	var kept []byte
	write := func(r io.Reader) error {
		var err error
		kept, err = io.ReadAll(r)
		return err
	}
	read := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(kept)), nil }
	res, err := filecheck.RoundTrip(size, write, read)
	require.NoError(t, err)
	assert.True(t, res.Same)
	assert.Equal(t, int64(size), res.Read)
	assert.Greater(t, res.HeapGrowth, int64(size), "holding the file whole shows")

	broken := func() (io.ReadCloser, error) {
		b := bytes.Clone(kept)
		b[123] ^= 1
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	res, err = filecheck.RoundTrip(size, write, broken)
	require.NoError(t, err)
	assert.False(t, res.Same)
}
