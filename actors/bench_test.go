package actors_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/messages"
	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// BenchmarkStream measures stdout throughput through the runtime (reader,
// guard, outlet, the stream's queue and pump, channel) next to, in the same
// run, the same adapter stream drained directly on the benchmark's
// goroutine, and the same stream read on a goroutine of its own and handed
// over a plain Go channel (the least any design that reads off the
// caller's goroutine pays). It reports the rates and runtime/direct and
// runtime/handoff.
func BenchmarkStream(b *testing.B) {
	b.Run("32KiB-chunks", func(b *testing.B) { benchStream(b, 2048, chunkSize) }) // 64 MiB per run
	b.Run("64B-lines", func(b *testing.B) { benchStream(b, 16384, 64) })          // 1 MiB per run
}

func benchStream(b *testing.B, chunks, size int) {
	rt, h := startHose(b, chunks, size)
	bytesPerRun := float64(chunks * size)
	var direct, handoff, through time.Duration
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
		for range handOver(&hoseStream{total: chunks, size: size}) {
		}
		handoff += time.Since(start)

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
	b.ReportMetric(mbps(handoff), "handoff-MB/s")
	b.ReportMetric(mbps(through), "runtime-MB/s")
	b.ReportMetric(mbps(through)/mbps(direct), "runtime/direct")
	b.ReportMetric(mbps(through)/mbps(handoff), "runtime/handoff")
}

// handOver reads st on a goroutine and hands its events over a channel,
// which closes after the terminal event.
func handOver(st paddock.Stream) <-chan paddock.Event {
	out := make(chan paddock.Event)
	go func() {
		defer close(out)
		for {
			ev, err := st.Next(ctx)
			if err != nil {
				return
			}
			out <- ev
			if ev.Kind.Terminal() {
				return
			}
		}
	}()
	return out
}

// startHose starts a runtime over a firehose of chunks frames of size
// bytes, with one sandbox.
func startHose(b *testing.B, chunks, size int, edit ...func(*actors.Config)) (*actors.Runtime, paddock.Handle) {
	hose := &firehose{Adapter: fake.New(), chunks: chunks, size: size}
	cfg := actors.Config{Adapters: paddock.Registry{"fake": hose}}
	for _, e := range edit {
		e(&cfg)
	}
	rt, err := actors.Start(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
	h, err := rt.Create(ctx, "fake", "box", paddock.CreateOpts{})
	if err != nil {
		b.Fatal(err)
	}
	return rt, h
}

// BenchmarkFrames measures 64-byte stdout frames per second from an adapter
// stream through a command actor to an owner actor that grants credit with
// Credits, next to, in the same run, raw hollywood Sends of one such frame
// to an actor that counts them; it reports both rates and their ratio
// (runtime/raw-send).
func BenchmarkFrames(b *testing.B) {
	const frames = 16384
	rt, h := startHose(b, frames, 64)
	e := rt.Engine()
	var raw, through time.Duration
	for range b.N {
		got := make(chan struct{})
		n := 0
		counter := e.SpawnFunc(func(c *actor.Context) {
			if _, ok := c.Message().(*messages.Stdout); ok {
				if n++; n == frames {
					close(got)
				}
			}
		}, "raw")
		frame := &messages.Stdout{Ref: "raw", Seq: 1, Data: make([]byte, 64)}
		start := time.Now()
		for range frames {
			e.Send(counter, frame)
		}
		<-got
		raw += time.Since(start)
		<-e.Poison(counter).Done()

		ended := make(chan struct{})
		credits := actors.NewCredits(0)
		owner := e.SpawnFunc(func(c *actor.Context) {
			if f, ok := c.Message().(messages.Frame); ok {
				credits.Consumed(c, f)
				if messages.IsTerminal(f) {
					close(ended)
				}
			}
		}, "owner")
		start = time.Now()
		if _, _, err := rt.SpawnTo(ctx, owner, h, paddock.NewCmd("firehose"), paddock.SpawnOpts{}, 0); err != nil {
			b.Fatal(err)
		}
		<-ended
		through += time.Since(start)
		<-e.Poison(owner).Done()
	}
	rate := func(d time.Duration) float64 { return frames * float64(b.N) / d.Seconds() }
	b.ReportMetric(rate(raw), "raw-send-frames/s")
	b.ReportMetric(rate(through), "runtime-frames/s")
	b.ReportMetric(rate(through)/rate(raw), "runtime/raw-send")
}

// BenchmarkFramesObserved is BenchmarkFrames' runtime path with metrics
// (a Prometheus registry) and tracing (the OpenTelemetry SDK's provider)
// both on, next to, in the same run, the same path with both off; it
// reports both rates and their ratio (observed/plain; the goal is at
// least 0.95).
func BenchmarkFramesObserved(b *testing.B) {
	const frames = 16384
	plain, hp := startHose(b, frames, 64)
	tp := sdktrace.NewTracerProvider()
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	observed, ho := startHose(b, frames, 64, func(c *actors.Config) {
		c.Name, c.Metrics, c.Tracer = "observed", prometheus.NewRegistry(), tp
	})
	run := func(rt *actors.Runtime, h paddock.Handle) time.Duration {
		e := rt.Engine()
		ended := make(chan struct{})
		credits := actors.NewCredits(0)
		owner := e.SpawnFunc(func(c *actor.Context) {
			if f, ok := c.Message().(messages.Frame); ok {
				credits.Consumed(c, f)
				if messages.IsTerminal(f) {
					close(ended)
				}
			}
		}, "owner")
		defer func() { <-e.Poison(owner).Done() }()
		start := time.Now()
		if _, _, err := rt.SpawnTo(ctx, owner, h, paddock.NewCmd("firehose"), paddock.SpawnOpts{}, 0); err != nil {
			b.Fatal(err)
		}
		<-ended
		return time.Since(start)
	}
	var off, on time.Duration
	for i := range b.N {
		if i%2 == 0 { // alternate which goes first
			off += run(plain, hp)
			on += run(observed, ho)
		} else {
			on += run(observed, ho)
			off += run(plain, hp)
		}
	}
	rate := func(d time.Duration) float64 { return frames * float64(b.N) / d.Seconds() }
	b.ReportMetric(rate(off), "plain-frames/s")
	b.ReportMetric(rate(on), "observed-frames/s")
	b.ReportMetric(rate(on)/rate(off), "observed/plain")
}

// BenchmarkLiveCommands holds 10,000 commands live at once (their streams
// block until cancelled) and reports what each costs the embedding
// process: heap, heap plus goroutine stacks, and goroutines, measured
// against the same process just before they were spawned. It does so for
// owner actors (SpawnTo) and for plain-Go FrameStreams (Spawn).
func BenchmarkLiveCommands(b *testing.B) {
	const live = 10_000
	for _, mode := range []string{"actor-owner", "frame-stream"} {
		b.Run(mode, func(b *testing.B) {
			var heap, total, goroutines float64
			for range b.N {
				h, t, g := measureLive(b, live, mode == "frame-stream")
				heap, total, goroutines = heap+h, total+t, goroutines+g
			}
			n := float64(b.N)
			b.ReportMetric(heap/n/1024, "heap-KiB/cmd")
			b.ReportMetric(total/n/1024, "heap+stacks-KiB/cmd")
			b.ReportMetric(goroutines/n, "goroutines/cmd")
		})
	}
}

// measureLive spawns live idle commands and returns the heap, heap plus
// stacks, and goroutines each added.
func measureLive(b *testing.B, live int, streams bool) (heap, total, goroutines float64) {
	ad := &idleAdapter{Adapter: fake.New()}
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": ad}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = rt.Shutdown(context.Background()) }()
	h, err := rt.Create(ctx, "fake", "box", paddock.CreateOpts{})
	if err != nil {
		b.Fatal(err)
	}
	owner := rt.Engine().SpawnFunc(func(*actor.Context) {}, "owner")
	before, beforeG := memNow()
	held := make([]*actors.FrameStream, 0, live)
	for i := range live {
		if streams {
			s, err := rt.Spawn(ctx, h, paddock.NewCmd("idle"), paddock.SpawnOpts{Stdin: true})
			if err != nil {
				b.Fatal(err)
			}
			held = append(held, s)
			continue
		}
		if _, _, err := rt.SpawnTo(ctx, owner, h, paddock.NewCmd("idle"), paddock.SpawnOpts{Stdin: true}, 0); err != nil {
			b.Fatal(fmt.Errorf("command %d: %w", i, err))
		}
	}
	for ad.waiting.Load() < int64(live) { // every reader is parked in Next
		runtime.Gosched()
	}
	after, afterG := memNow()
	n := float64(live)
	heap = float64(after.HeapAlloc-before.HeapAlloc) / n
	total = float64(after.HeapAlloc+after.StackInuse-before.HeapAlloc-before.StackInuse) / n
	goroutines = float64(afterG-beforeG) / n
	for _, s := range held {
		_ = s.Close()
	}
	return heap, total, goroutines
}

// memNow returns the memory statistics and goroutine count after a GC.
func memNow() (runtime.MemStats, int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m, runtime.NumGoroutine()
}

// idleAdapter is a fake whose "idle" command makes no output and no
// goroutine: its Next waits for cancellation, so what a live command costs
// is the runtime's alone.
type idleAdapter struct {
	*fake.Adapter
	waiting atomic.Int64 // streams parked in Next
}

func (a *idleAdapter) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, o paddock.SpawnOpts) (paddock.Stream, error) {
	if cmd.Path != "idle" {
		return a.Adapter.Spawn(ctx, h, cmd, o)
	}
	return &idleStream{waiting: &a.waiting}, nil
}

type idleStream struct{ waiting *atomic.Int64 }

func (s *idleStream) Next(ctx context.Context) (paddock.Event, error) {
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	<-ctx.Done()
	return paddock.Event{}, ctx.Err()
}
func (s *idleStream) WriteStdin(context.Context, []byte) error { return nil }
func (s *idleStream) CloseStdin(context.Context) error         { return nil }
func (s *idleStream) Close() error                             { return nil }
func (s *idleStream) SessionID() string                        { return "" }
