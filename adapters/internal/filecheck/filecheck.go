// Package filecheck is for adapter test suites: it sends a large file up
// and back through an adapter and proves the bytes survive while the
// process's heap stays small (files must be streamed, never held whole).
package filecheck

import (
	"crypto/sha256"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Pattern is n bytes that differ from offset to offset, made as they are
// read (nothing held).
type Pattern struct{ off, n int64 }

// NewPattern returns a reader of n pattern bytes.
func NewPattern(n int64) *Pattern { return &Pattern{n: n} }

func (p *Pattern) Read(b []byte) (int, error) {
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

// Result is what a round trip measured.
type Result struct {
	Same       bool  // the bytes read back are the bytes written
	Read       int64 // how many came back
	HeapGrowth int64 // the largest heap in use above the start, in bytes
}

// RoundTrip writes size pattern bytes with write, reads them back with
// read, and measures the process's heap in use meanwhile (sampled every
// 5 ms). Run it where no other test allocates (not in parallel).
func RoundTrip(size int64, write func(io.Reader) error, read func() (io.ReadCloser, error)) (Result, error) {
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
	defer func() {
		close(stop)
		wg.Wait()
	}()
	want := sha256.New()
	_, _ = io.Copy(want, NewPattern(size))
	if err := write(NewPattern(size)); err != nil {
		return Result{}, err
	}
	rc, err := read()
	if err != nil {
		return Result{}, err
	}
	defer rc.Close()
	got := sha256.New()
	n, err := io.Copy(got, rc)
	if err != nil {
		return Result{}, err
	}
	return Result{Same: string(want.Sum(nil)) == string(got.Sum(nil)), Read: n,
		HeapGrowth: int64(peak.Load()) - int64(base.HeapInuse)}, nil
}
