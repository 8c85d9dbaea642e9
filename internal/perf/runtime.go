package perf

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/messages"
	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// ownerRun spawns firehose on rt to a fresh owner actor that grants
// credit as it consumes, and answers how long until its terminal frame.
func ownerRun(rt *actors.Runtime, h paddock.Handle) (time.Duration, error) {
	e := rt.Engine()
	ended := make(chan struct{})
	credits := actors.NewCredits(rt.Window())
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
	if _, _, err := rt.SpawnTo(context.Background(), owner, h, paddock.NewCmd("firehose"), paddock.SpawnOpts{}, 0); err != nil {
		return 0, err
	}
	<-ended
	return time.Since(start), nil
}

// rawSends is how long frames raw hollywood Sends of one frame take to
// reach an actor that counts them.
func rawSends(e *actor.Engine, frames int) time.Duration {
	got := make(chan struct{})
	n := 0
	counter := e.SpawnFunc(func(c *actor.Context) {
		if _, ok := c.Message().(*messages.Stdout); ok {
			if n++; n == frames {
				close(got)
			}
		}
	}, "raw")
	defer func() { <-e.Poison(counter).Done() }()
	frame := &messages.Stdout{Ref: "raw", Seq: 1, Data: make([]byte, 64)}
	start := time.Now()
	for range frames {
		e.Send(counter, frame)
	}
	<-got
	return time.Since(start)
}

// Frames measures 64-byte stdout frames per second from an adapter stream
// through a command actor to an owner actor granting credit, against raw
// hollywood Sends of one such frame, runs times each, alternating; the
// figure is the median of the runs' ratios, as Stream's is.
func Frames(frames, runs int) (Figure, error) {
	rt, h, stop, err := startRuntime("fake", NewHose(frames, 64))
	if err != nil {
		return Figure{}, err
	}
	defer stop()
	var raw, through time.Duration
	ratios := make([]float64, 0, runs)
	for range runs {
		r := rawSends(rt.Engine(), frames)
		d, err := ownerRun(rt, h)
		if err != nil {
			return Figure{}, err
		}
		raw, through = raw+r, through+d
		ratios = append(ratios, r.Seconds()/d.Seconds())
	}
	rate := func(d time.Duration) float64 { return float64(frames*runs) / d.Seconds() }
	f := Figure{Name: "frames through the runtime vs raw hollywood Send (64 B)", Unit: "runtime/raw-send",
		Value:    median(ratios),
		Measured: fmt.Sprintf("%.2fM vs %.2fM frames/s", rate(through)/1e6, rate(raw)/1e6),
		Details:  map[string]float64{"runtime_frames_per_s": rate(through), "raw_send_frames_per_s": rate(raw)}}
	atLeast(&f, 0.15)
	aimAtLeast(&f, 0.4)
	return f, nil
}

// FramesObserved measures Frames' runtime path with metrics and tracing
// on against both off, runs times each, alternating which goes first; the
// figure is the median of the runs' ratios, as Stream's is.
func FramesObserved(frames, runs int) (Figure, error) {
	plain, hp, stopPlain, err := startRuntime("fake", NewHose(frames, 64))
	if err != nil {
		return Figure{}, err
	}
	defer stopPlain()
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	observed, ho, stopObserved, err := startRuntime("fake", NewHose(frames, 64), func(c *actors.Config) {
		c.Name, c.Metrics, c.Tracer = "observed", prometheus.NewRegistry(), tp
	})
	if err != nil {
		return Figure{}, err
	}
	defer stopObserved()
	var off, on time.Duration
	ratios := make([]float64, 0, runs)
	for i := range runs {
		order := []bool{false, true}
		if i%2 == 1 {
			order = []bool{true, false}
		}
		var took [2]time.Duration // off, on
		for _, observe := range order {
			rt, h, side := plain, hp, 0
			if observe {
				rt, h, side = observed, ho, 1
			}
			d, err := ownerRun(rt, h)
			if err != nil {
				return Figure{}, err
			}
			took[side] = d
		}
		off, on = off+took[0], on+took[1]
		ratios = append(ratios, took[0].Seconds()/took[1].Seconds())
	}
	rate := func(d time.Duration) float64 { return float64(frames*runs) / d.Seconds() }
	f := Figure{Name: "frames with metrics and tracing on vs off", Unit: "observed/plain", Value: median(ratios),
		Measured: fmt.Sprintf("%.2fM vs %.2fM frames/s", rate(on)/1e6, rate(off)/1e6),
		Details:  map[string]float64{"observed_frames_per_s": rate(on), "plain_frames_per_s": rate(off)}}
	atLeast(&f, 0.9)
	return f, nil
}

// StreamRates are the three sides of Stream: MB/s read directly, handed
// over a Go channel, and through the runtime to a FrameStream, each over all
// runs; Ratio is the median over runs of each run's runtime/direct.
type StreamRates struct{ Direct, Handoff, Runtime, Ratio float64 }

// Stream measures chunks stdout events of size bytes through the runtime
// to a FrameStream, against the same stream drained directly and handed
// over a plain Go channel, runs times each after one uncounted warm-up run
// (the first run of a process grows its heap). The three sides of a run are
// measured back to back, and the ratio is the median of the runs' ratios:
// a collection cycle or a descheduling that lands on one side of one run
// moves a sum of durations by far more than the runtime's own cost, and
// moves a median only when it hits most runs.
func Stream(chunks, size, runs int) (StreamRates, error) {
	hose := NewHose(chunks, size)
	rt, h, stop, err := startRuntime("fake", hose)
	if err != nil {
		return StreamRates{}, err
	}
	defer stop()
	ctx := context.Background()
	var direct, handoff, through time.Duration
	ratios := make([]float64, 0, runs)
	for run := range runs + 1 { // run 0 warms the heap and the runtime up and is not counted
		start := time.Now()
		st := hose.Stream()
		for {
			ev, err := st.Next(ctx)
			if err != nil || ev.Kind.Terminal() {
				break
			}
		}
		d := time.Since(start)
		direct += d

		start = time.Now()
		for range handOver(hose.Stream()) {
		}
		handoff += time.Since(start)

		start = time.Now()
		s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.NewCmd("firehose"), paddock.SpawnOpts{})
		if err != nil {
			return StreamRates{}, err
		}
		for range s.(*actors.FrameStream).C() {
		}
		r := time.Since(start)
		if run == 0 {
			direct, handoff = 0, 0
			continue
		}
		through += r
		ratios = append(ratios, d.Seconds()/r.Seconds())
	}
	mbps := func(d time.Duration) float64 { return float64(chunks*size*runs) / d.Seconds() / (1 << 20) }
	return StreamRates{Direct: mbps(direct), Handoff: mbps(handoff), Runtime: mbps(through), Ratio: median(ratios)}, nil
}

// median is the middle of xs (the mean of the two middles for an even
// count); xs is sorted in place.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	m := len(xs) / 2
	if len(xs)%2 == 1 {
		return xs[m]
	}
	return (xs[m-1] + xs[m]) / 2
}

// StreamFigure is Stream as a figure: runtime/direct, goal >= 0.4.
func StreamFigure(chunks, size, runs int) (Figure, error) {
	r, err := Stream(chunks, size, runs)
	if err != nil {
		return Figure{}, err
	}
	f := Figure{Name: fmt.Sprintf("stream of %d KiB chunks through the runtime vs read directly", size>>10), Unit: "runtime/direct",
		Value:    r.Ratio,
		Measured: fmt.Sprintf("%.0f vs %.0f MB/s (a Go channel handoff: %.0f)", r.Runtime, r.Direct, r.Handoff),
		Details:  map[string]float64{"runtime_mb_per_s": r.Runtime, "direct_mb_per_s": r.Direct, "handoff_mb_per_s": r.Handoff}}
	atLeast(&f, 0.4)
	return f, nil
}

// handOver reads st on a goroutine and hands its events over a channel,
// which closes after the terminal event.
func handOver(st paddock.Stream) <-chan paddock.Event {
	out := make(chan paddock.Event)
	go func() {
		defer close(out)
		for {
			ev, err := st.Next(context.Background())
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

// LiveCost is what each live idle command costs the process.
type LiveCost struct{ HeapKiB, TotalKiB, Goroutines float64 }

// LiveCommands holds live idle commands at once (owner actors, or
// FrameStreams) and answers what each adds: heap, heap plus goroutine
// stacks, and goroutines, measured against the process just before.
func LiveCommands(live int, streams bool) (LiveCost, error) {
	hose := NewHose(0, 0)
	rt, h, stop, err := startRuntime("fake", hose)
	if err != nil {
		return LiveCost{}, err
	}
	defer stop()
	ctx := context.Background()
	owner := rt.Engine().SpawnFunc(func(*actor.Context) {}, "owner")
	before, beforeG := memNow()
	held := make([]*actors.FrameStream, 0, live)
	defer func() {
		for _, s := range held {
			_ = s.Close()
		}
	}()
	for i := range live {
		if streams {
			s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.NewCmd("idle"), paddock.SpawnOpts{Stdin: true})
			if err != nil {
				return LiveCost{}, err
			}
			held = append(held, s.(*actors.FrameStream))
			continue
		}
		if _, _, err := rt.SpawnTo(ctx, owner, h, paddock.NewCmd("idle"), paddock.SpawnOpts{Stdin: true}, 0); err != nil {
			return LiveCost{}, fmt.Errorf("command %d: %w", i, err)
		}
	}
	for hose.Parked() < int64(live) { // every reader is parked in Next
		runtime.Gosched()
	}
	after, afterG := memNow()
	n := float64(live)
	return LiveCost{
		HeapKiB:    float64(after.HeapAlloc-before.HeapAlloc) / n / 1024,
		TotalKiB:   float64(after.HeapAlloc+after.StackInuse-before.HeapAlloc-before.StackInuse) / n / 1024,
		Goroutines: float64(afterG-beforeG) / n,
	}, nil
}

// LiveFigures measures LiveCommands both ways and answers three figures:
// heap plus stacks per command through an owner actor (goal <= 6 KiB) and
// through a FrameStream read with Next (goal <= 8 KiB), and goroutines per
// command, the worse of the two ways (goal <= 1).
func LiveFigures(live int) ([]Figure, error) {
	owners, err := LiveCommands(live, false)
	if err != nil {
		return nil, err
	}
	streams, err := LiveCommands(live, true)
	if err != nil {
		return nil, err
	}
	details := map[string]float64{
		"owner_heap_kib": owners.HeapKiB, "owner_total_kib": owners.TotalKiB, "owner_goroutines": owners.Goroutines,
		"stream_heap_kib": streams.HeapKiB, "stream_total_kib": streams.TotalKiB, "stream_goroutines": streams.Goroutines}
	memory := func(way string, c LiveCost, goal float64) Figure {
		f := Figure{Name: fmt.Sprintf("memory per live command, %s (%d live)", way, live), Unit: "KiB heap+stacks",
			Value: c.TotalKiB, Measured: fmt.Sprintf("heap %.1f, stacks %.1f KiB", c.HeapKiB, c.TotalKiB-c.HeapKiB), Details: details}
		atMost(&f, goal)
		return f
	}
	gs := Figure{Name: fmt.Sprintf("goroutines per live command (%d live)", live), Unit: "goroutines",
		Value:    max(owners.Goroutines, streams.Goroutines),
		Measured: fmt.Sprintf("owner actor %.2f, FrameStream %.2f", owners.Goroutines, streams.Goroutines), Details: details}
	atMost(&gs, 1)
	return []Figure{memory("owner actor", owners, 6), memory("FrameStream", streams, 8), gs}, nil
}

// SlowOwner streams chunks of size bytes to an owner actor that never
// grants credit, and answers how much the heap grew once the command
// stopped for want of credit: the window's frames, not the stream.
func SlowOwner(chunks, size int) (Figure, error) {
	hose := NewHose(chunks, size)
	rt, h, stop, err := startRuntime("fake", hose)
	if err != nil {
		return Figure{}, err
	}
	defer stop()
	e := rt.Engine()
	var held []messages.Frame // the owner keeps what it got, as a slow owner would
	got := make(chan struct{}, 1)
	owner := e.SpawnFunc(func(c *actor.Context) {
		if f, ok := c.Message().(messages.Frame); ok {
			held = append(held, f)
			if len(held) == rt.Window() {
				got <- struct{}{}
			}
		}
	}, "slow-owner")
	defer func() { <-e.Poison(owner).Done() }()
	before, _ := memNow()
	cmd, _, err := rt.SpawnTo(context.Background(), owner, h, paddock.NewCmd("firehose"), paddock.SpawnOpts{}, 0)
	if err != nil {
		return Figure{}, err
	}
	select {
	case <-got:
	case <-time.After(time.Minute):
		return Figure{}, fmt.Errorf("the owner never received a window of frames")
	}
	// The reader stops at the window: give it a moment to prove it.
	for range 50 {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	after, _ := memNow()
	_ = rt.Controls(cmd).Stop(context.Background())
	growth := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
	streamMiB := float64(chunks*size) / (1 << 20)
	windowMiB := float64(rt.Window()*size) / (1 << 20)
	f := Figure{Name: fmt.Sprintf("heap growth with an owner that grants no credit (%.0f MiB stream)", streamMiB), Unit: "MiB",
		Value:    growth,
		Measured: fmt.Sprintf("%.1f MiB grown, %d of %d chunks read; the window is %.1f MiB", growth, hose.Read(), chunks, windowMiB),
		Details:  map[string]float64{"growth_mib": growth, "window_mib": windowMiB, "chunks_read": float64(hose.Read())}}
	atMost(&f, 2*windowMiB+1)
	return f, nil
}
