package e2b_test

import (
	"crypto/sha256"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pattern is n bytes that differ from offset to offset, made as they are
// read (nothing held).
type pattern struct{ off, n int64 }

func (p *pattern) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), p.n-p.off)]
	for i := range b {
		o := p.off + int64(i)
		b[i] = byte(o ^ o>>8 ^ o>>16 ^ o>>24)
	}
	p.off += int64(len(b))
	return len(b), nil
}

// A 256 MiB file goes up and comes back streamed both ways: the bytes are
// the same, and the heap of the whole process (adapter and e2btest
// together) never grows by 32 MiB. Not parallel: the heap is shared.
func TestFilesStreamBothWaysInBoundedMemory(t *testing.T) {
	const size = 256 << 20
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)

	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})

	want := sha256.New()
	_, _ = io.Copy(want, &pattern{n: size})
	require.NoError(t, a.WriteFile(ctxFor(t, 5*time.Minute), h, "/tmp/big.bin", 0o644, &pattern{n: size}))
	rc, err := a.ReadFile(ctxFor(t, 5*time.Minute), h, "/tmp/big.bin")
	require.NoError(t, err)
	got := sha256.New()
	n, err := io.Copy(got, rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	close(stop)
	wg.Wait()

	assert.Equal(t, int64(size), n)
	assert.Equal(t, want.Sum(nil), got.Sum(nil), "the same bytes came back")
	growth := int64(peak.Load()) - int64(base.HeapInuse)
	t.Logf("256 MiB round trip: heap in use grew by at most %.1f MiB", float64(growth)/(1<<20))
	assert.Less(t, growth, int64(32<<20), "streamed, never held whole")
}
