package actors_test

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/internal/perf"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const chunkSize = 32 << 10

// heapWatch samples the live heap until stopped and reports the peak.
func heapWatch() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); <-finished; return peak.Load() }
}

func heapNow() uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// TestFlowControlBoundsMemory streams 512 MiB to a consumer that reads
// slower than the command produces: the command reads only as credit
// returns, so the heap stays bounded, and every byte arrives in order.
//
// It measures the process's heap, so it runs alone (not parallel).
func TestFlowControlBoundsMemory(t *testing.T) {
	const total = 512 << 20
	hose := perf.NewHose(total/chunkSize, chunkSize)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": hose}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)) })
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)

	base := heapNow()
	stop := heapWatch()
	s, err := spawn(rt, ctx, h, paddock.NewCmd("firehose"), paddock.SpawnOpts{})
	require.NoError(t, err)
	received, i := 0, 0
	for f := range s.C() {
		out, ok := f.(*messages.Stdout)
		if !ok {
			assert.Equal(t, "exit:0", terminalText(f))
			continue
		}
		if !bytes.Equal(perf.HoseChunk(i, chunkSize), out.GetData()) {
			require.Failf(t, "out of order or corrupt", "chunk %d differs", i)
		}
		received += len(out.GetData())
		i++
		if i%16 == 0 {
			time.Sleep(200 * time.Microsecond) // the consumer is the slow side
		}
	}
	peak := stop()
	require.Equal(t, total, received, "every byte arrives")
	growth := int64(peak) - int64(base)
	t.Logf("streamed %d MiB; heap peak %.1f MiB above a %.1f MiB base", total>>20, float64(growth)/(1<<20), float64(base)/(1<<20))
	assert.Less(t, growth, int64(64<<20), "a fast command and a slow owner cost bounded memory")
}

// TestFlowControlHoldsTheReader proves the command stops reading when its
// owner grants no credit: with a window of 8, an owner that never credits
// receives 8 output frames, and the stream is read no further; each credit
// then buys exactly that many more reads and frames.
func TestFlowControlHoldsTheReader(t *testing.T) {
	t.Parallel()
	hose := perf.NewHose(1000, chunkSize)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": hose}, Window: 8})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)) })
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)

	var frames atomic.Int64
	sender := make(chan *actor.PID, 1)
	owner := rt.Engine().SpawnFunc(func(c *actor.Context) {
		if _, ok := c.Message().(messages.Frame); ok {
			if frames.Add(1) == 1 { // and never grants credit by itself
				sender <- c.Sender()
			}
		}
	}, "stingy")
	defer rt.Engine().Poison(owner)
	sub, _, err := rt.SpawnTo(ctx, owner, h, paddock.NewCmd("firehose"), paddock.SpawnOpts{}, 0)
	require.NoError(t, err)
	command := <-sender
	for _, want := range []int64{8, 11, 16} {
		if want > 8 {
			rt.Engine().Send(command, &messages.Credit{Ref: string(sub.Ref), N: uint32(want - frames.Load())})
		}
		require.Eventually(t, func() bool { return frames.Load() == want }, time.Minute, time.Millisecond)
		// Polled for a while: neither a frame nor a read beyond the credit.
		require.Never(t, func() bool { return frames.Load() > want || hose.Read() > want },
			100*time.Millisecond, time.Millisecond, "nothing beyond %d", want)
	}
}

// An owner that credits with the helper made for the runtime's window gets
// a whole stream, whatever that window is; one batching more than the
// window would be stuck after the first window.
func TestCreditsFollowTheRuntimeWindow(t *testing.T) {
	t.Parallel()
	for _, window := range []int{1, 2, 8, actors.DefaultWindow} {
		t.Run(fmt.Sprint(window), func(t *testing.T) {
			t.Parallel()
			hose := perf.NewHose(100, 64)
			rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": hose}, Window: window})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)) })
			h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
			require.NoError(t, err)
			credits := actors.NewCredits(rt.Window())
			var outputs atomic.Int64
			ended := make(chan messages.Frame, 1)
			owner := rt.Engine().SpawnFunc(func(c *actor.Context) {
				if f, ok := c.Message().(messages.Frame); ok {
					credits.Consumed(c, f)
					if messages.IsTerminal(f) {
						ended <- f
					} else {
						outputs.Add(1)
					}
				}
			}, "owner")
			t.Cleanup(func() { <-rt.Engine().Poison(owner).Done() })
			_, _, err = rt.SpawnTo(ctx, owner, h, paddock.NewCmd("firehose"), paddock.SpawnOpts{}, 0)
			require.NoError(t, err)
			select {
			case f := <-ended:
				require.IsType(t, &messages.Exit{}, f)
				assert.Equal(t, int64(100), outputs.Load())
			case <-time.After(time.Minute):
				require.Failf(t, "stuck", "after %d of 100 frames", outputs.Load())
			}
		})
	}
}
