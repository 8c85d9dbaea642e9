// Package streambench is what the hosted adapters' stdout benchmarks
// share: reading a command's stdout through an adapter's stream (the
// adapter's own, or the runtime's Adapter), and reporting MB/s next to a
// raw baseline.
package streambench

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
)

// stdout spawns cmd through a, reads its stream to the exit, and answers
// the stdout bytes it carried.
func stdout(b *testing.B, a paddock.Adapter, h paddock.Handle, cmd paddock.Cmd) int {
	b.Helper()
	ctx := context.Background()
	st, err := a.Spawn(ctx, h, cmd, paddock.SpawnOpts{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	n := 0
	for {
		ev, err := st.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		switch ev.Kind {
		case paddock.EventStdout:
			n += len(ev.Data)
		case paddock.EventExit:
			return n
		default:
			b.Fatalf("ended with %v", ev)
		}
	}
}

// Compare reads size bytes of cmd's stdout three ways in each iteration,
// in turn: raw(i), the baseline, then through direct (the adapter) and
// through viaRuntime (the runtime's Adapter of it), and reports each
// side's MB/s and the ratios to the baseline.
func Compare(b *testing.B, raw func(i int), direct, viaRuntime paddock.Adapter, h paddock.Handle, cmd paddock.Cmd, size int) {
	var tRaw, tAdapter, tRuntime time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		raw(i)
		tRaw += time.Since(start)

		start = time.Now()
		Expect(b, stdout(b, direct, h, cmd), size)
		tAdapter += time.Since(start)

		start = time.Now()
		Expect(b, stdout(b, viaRuntime, h, cmd), size)
		tRuntime += time.Since(start)
	}
	report(b, size, tRaw, tAdapter, tRuntime)
}

// report reports the MB/s of each side, size bytes per iteration, and the
// adapter's and the runtime's ratios to the raw baseline.
func report(b *testing.B, size int, raw, adapter, runtime time.Duration) {
	mbps := func(d time.Duration) float64 { return float64(b.N) * float64(size) / (1 << 20) / d.Seconds() }
	b.ReportMetric(mbps(raw), "raw-MB/s")
	b.ReportMetric(mbps(adapter), "adapter-MB/s")
	b.ReportMetric(mbps(runtime), "runtime-MB/s")
	b.ReportMetric(mbps(adapter)/mbps(raw), "adapter/raw")
	b.ReportMetric(mbps(runtime)/mbps(raw), "runtime/raw")
}

// Expect fails b unless n is size.
func Expect(b *testing.B, n, size int) {
	b.Helper()
	if n != size {
		b.Fatalf("read %d bytes, want %d", n, size)
	}
}
