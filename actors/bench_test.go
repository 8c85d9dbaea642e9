package actors_test

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/fake"
)

// BenchmarkStream measures stdout throughput through the runtime (command
// actor, guard, credits, bridge, channel) next to the same adapter stream
// drained directly, in the same run, and reports their ratio.
func BenchmarkStream(b *testing.B) {
	b.Run("32KiB-chunks", func(b *testing.B) { benchStream(b, 2048, chunkSize) }) // 64 MiB per run
	b.Run("64B-lines", func(b *testing.B) { benchStream(b, 16384, 64) })          // 1 MiB per run
}

func benchStream(b *testing.B, chunks, size int) {
	hose := &firehose{Adapter: fake.New(), chunks: chunks, size: size}
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": hose}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = rt.Shutdown(context.Background()) }()
	h, err := rt.Create(ctx, "fake", "box", paddock.CreateOpts{})
	if err != nil {
		b.Fatal(err)
	}
	bytesPerRun := float64(chunks * size)
	var direct, through time.Duration
	b.SetBytes(int64(bytesPerRun))
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		st := &hoseStream{total: chunks, size: size}
		for {
			ev, err := st.Next(ctx)
			if err != nil || ev.Kind.Terminal() {
				break
			}
		}
		direct += time.Since(start)

		start = time.Now()
		s, err := rt.Spawn(ctx, h, paddock.NewCmd("firehose"), paddock.SpawnOpts{})
		if err != nil {
			b.Fatal(err)
		}
		for range s.C() {
		}
		through += time.Since(start)
	}
	mbps := func(d time.Duration) float64 { return bytesPerRun * float64(b.N) / d.Seconds() / (1 << 20) }
	b.ReportMetric(mbps(direct), "direct-MB/s")
	b.ReportMetric(mbps(through), "runtime-MB/s")
	b.ReportMetric(mbps(through)/mbps(direct), "runtime/direct")
}
