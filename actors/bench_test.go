package actors_test

import (
	"testing"

	"github.com/paddockhq/paddock/internal/perf"
)

// The runtime's benchmarks. Each measures its baseline in the same run,
// through package perf, which cmd/paddock-bench also runs.

// BenchmarkStream measures stdout throughput through the runtime (reader,
// guard, outlet, the stream's queue and pump, channel) next to the same
// adapter stream drained directly on the benchmark's goroutine, and read on
// a goroutine of its own and handed over a plain Go channel (the least any
// design that reads off the caller's goroutine pays). It reports the rates
// and runtime/direct and runtime/handoff.
func BenchmarkStream(b *testing.B) {
	b.Run("32KiB-chunks", func(b *testing.B) { benchStream(b, 2048, 32<<10) }) // 64 MiB per run
	b.Run("64B-lines", func(b *testing.B) { benchStream(b, 16384, 64) })       // 1 MiB per run
}

func benchStream(b *testing.B, chunks, size int) {
	b.SetBytes(int64(chunks * size))
	r, err := perf.Stream(chunks, size, b.N)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(r.Direct, "direct-MB/s")
	b.ReportMetric(r.Handoff, "handoff-MB/s")
	b.ReportMetric(r.Runtime, "runtime-MB/s")
	b.ReportMetric(r.Ratio, "runtime/direct")
	b.ReportMetric(r.Runtime/r.Handoff, "runtime/handoff")
}

// BenchmarkFrames measures 64-byte stdout frames per second from an adapter
// stream through a command actor to an owner actor that grants credit with
// Credits, next to raw hollywood Sends of one such frame to an actor that
// counts them; it reports both rates and their ratio (runtime/raw-send).
func BenchmarkFrames(b *testing.B) {
	f, err := perf.Frames(16384, b.N)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(f.Details["raw_send_frames_per_s"], "raw-send-frames/s")
	b.ReportMetric(f.Details["runtime_frames_per_s"], "runtime-frames/s")
	b.ReportMetric(f.Value, "runtime/raw-send")
}

// BenchmarkFramesObserved is BenchmarkFrames' runtime path with metrics
// (a Prometheus registry) and tracing (the OpenTelemetry SDK's provider)
// both on, next to the same path with both off; it reports both rates and
// their ratio (observed/plain; the goal is at least 0.9).
func BenchmarkFramesObserved(b *testing.B) {
	f, err := perf.FramesObserved(16384, b.N)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(f.Details["plain_frames_per_s"], "plain-frames/s")
	b.ReportMetric(f.Details["observed_frames_per_s"], "observed-frames/s")
	b.ReportMetric(f.Value, "observed/plain")
}

// BenchmarkLiveCommands holds 10,000 commands live at once (their streams
// block until cancelled) and reports what each costs the embedding
// process: heap, heap plus goroutine stacks, and goroutines, measured
// against the same process just before they were spawned. It does so for
// owner actors (SpawnTo) and for plain-Go FrameStreams (Spawn).
func BenchmarkLiveCommands(b *testing.B) {
	for _, mode := range []string{"actor-owner", "frame-stream"} {
		b.Run(mode, func(b *testing.B) {
			var sum perf.LiveCost
			for range b.N {
				c, err := perf.LiveCommands(10_000, mode == "frame-stream")
				if err != nil {
					b.Fatal(err)
				}
				sum.HeapKiB, sum.TotalKiB, sum.Goroutines = sum.HeapKiB+c.HeapKiB, sum.TotalKiB+c.TotalKiB, sum.Goroutines+c.Goroutines
			}
			n := float64(b.N)
			b.ReportMetric(sum.HeapKiB/n, "heap-KiB/cmd")
			b.ReportMetric(sum.TotalKiB/n, "heap+stacks-KiB/cmd")
			b.ReportMetric(sum.Goroutines/n, "goroutines/cmd")
		})
	}
}
