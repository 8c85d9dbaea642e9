package actors_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/internal/heavy"
	"github.com/paddockhq/paddock/internal/perf"
	"github.com/paddockhq/paddock/messages"
	"github.com/paddockhq/paddock/supervisor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ownerActor collects frames and grants credit through actors.Credits.
type ownerActor struct {
	mu     sync.Mutex
	frames []messages.Frame
	count  atomic.Int64
}

func spawnOwner(e *actor.Engine, o *ownerActor) *actor.PID {
	credits := actors.NewCredits(0)
	return e.SpawnFunc(func(c *actor.Context) {
		if f, ok := c.Message().(messages.Frame); ok {
			o.mu.Lock()
			o.frames = append(o.frames, f)
			o.mu.Unlock()
			o.count.Add(1)
			credits.Consumed(c, f)
		}
	}, "owner")
}

func (o *ownerActor) snapshot() []messages.Frame {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]messages.Frame(nil), o.frames...)
}

func TestOwnerDeathDetachesTheCommand(t *testing.T) {
	t.Parallel()
	rt, f := startFake(t)
	events := watchEvents(t, rt.Engine())
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)

	o := &ownerActor{}
	owner := spawnOwner(rt.Engine(), o)
	cmd, session, err := rt.SpawnTo(ctx, owner, h, paddock.NewCmd("emit", "out:ready", "stay"), paddock.SpawnOpts{Stdin: true}, 0)
	require.NoError(t, err)

	// Keep output flowing, and kill the owner in the middle of it; the
	// writer goes on until the detach answers command_exited.
	const lines = 1_000_000
	var wrote atomic.Int64
	stopWriting := make(chan struct{})
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for i := 0; i < lines; i++ {
			select {
			case <-stopWriting:
				return
			default:
			}
			if err := rt.Controls(cmd).WriteStdin(ctx, []byte(fmt.Sprintf("%d;", i))); err != nil {
				assert.ErrorIs(t, err, paddock.ErrCommandExited, "after the detach writes answer command_exited")
				return
			}
			wrote.Add(1)
		}
	}()
	require.Eventually(t, func() bool { return o.count.Load() >= 100 }, time.Minute, time.Millisecond)
	deadBefore := events.deadLetters()
	<-rt.Engine().Poison(owner).Done()
	select { // the writer ends when the detach answers command_exited
	case <-writerDone:
	case <-time.After(time.Minute):
		close(stopWriting)
		<-writerDone
		require.Fail(t, "the dead owner's subscription was not detached")
	}
	require.Less(t, wrote.Load(), int64(lines), "the writer stopped on command_exited, not at its end")
	// Two flushes: a dead letter made while the first marker is handed out
	// is itself handed out before the second.
	events.flush(t)
	events.flush(t)
	t.Logf("dead letters after the owner stopped: %d; writes before the detach: %d", events.deadLetters()-deadBefore, wrote.Load())
	assert.LessOrEqual(t, events.deadLetters()-deadBefore, rt.Window(),
		"at most the frames in flight to the owner die: no dead-letter storm after it stopped")

	// Detached, not killed: the process lives and a new attacher replays it all.
	assert.True(t, f.SessionLive("box", session), "the command keeps running")
	require.ErrorIs(t, rt.Controls(cmd).WriteStdin(ctx, []byte("late")), paddock.ErrCommandExited, "the dead owner's subscription is detached")
	att, err := attach(rt, ctx, h, session, paddock.AttachOpts{Stdin: true})
	require.NoError(t, err)
	defer att.Close()
	var replay strings.Builder
	want := "ready"
	for i := int64(0); i < wrote.Load(); i++ {
		want += fmt.Sprintf("echo:%d;", i)
	}
	for replay.Len() < len(want) {
		replay.Write(frame(t, att).(*messages.Stdout).GetData())
	}
	assert.Equal(t, want, replay.String(), "the replay has everything, from byte zero, once")
	require.NoError(t, att.CloseStdin(ctx))
	rest := all(t, att)
	require.Len(t, rest, 1)
	assert.Equal(t, "exit:0", terminalText(rest[0]))
}

func TestThousandConcurrentCommands(t *testing.T) {
	t.Parallel()
	rt, _ := startFake(t)
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	const n = 1000
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := itoa(i)
			s, err := spawn(rt, ctx, h, paddock.NewCmd("emit", "out:"+id+"-a", "err:"+id+"-b", "out:"+id+"-c", "exit:"+itoa(i%256)), paddock.SpawnOpts{})
			if !assert.NoError(t, err) {
				return
			}
			frames := all(t, s)
			if !assert.Len(t, frames, 4, "command %d", i) {
				return
			}
			ref := string(s.Subscription().Ref)
			for j, f := range frames {
				assert.Equal(t, ref, f.GetRef(), "command %d frame %d carries its own ref", i, j)
				assert.Equal(t, uint64(j+1), f.GetSeq(), "command %d: contiguous seq", i)
			}
			assert.Equal(t, id+"-a", string(frames[0].(*messages.Stdout).GetData()))
			assert.Equal(t, id+"-b", string(frames[1].(*messages.Stderr).GetData()))
			assert.Equal(t, id+"-c", string(frames[2].(*messages.Stdout).GetData()))
			assert.Equal(t, "exit:"+itoa(i%256), terminalText(frames[3]))
			assert.Equal(t, uint64(3), frames[3].(*messages.Exit).GetOutputFrames())
		}()
	}
	wg.Wait()
}

func TestShutdownWithLiveCommands(t *testing.T) {
	t.Parallel()
	rt, f := startFake(t)
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	const n = 100
	streams := make([]*actors.FrameStream, n)
	o := &ownerActor{}
	owner := spawnOwner(rt.Engine(), o)
	defer func() { <-rt.Engine().Poison(owner).Done() }()
	for i := range n {
		if i%2 == 0 {
			streams[i], err = spawn(rt, ctx, h, paddock.NewCmd("emit", "out:ready", "stay"), paddock.SpawnOpts{Stdin: true})
			require.NoError(t, err)
			frame(t, streams[i])
			continue
		}
		_, _, err := rt.SpawnTo(ctx, owner, h, paddock.NewCmd("emit", "out:ready", "stay"), paddock.SpawnOpts{Stdin: true}, 0)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return o.count.Load() == n/2 }, time.Minute, time.Millisecond)

	terminals := make(chan string, n)
	var readers sync.WaitGroup
	for _, s := range streams {
		if s == nil {
			continue
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			for _, fr := range all(t, s) {
				terminals <- terminalText(fr)
			}
		}()
	}
	sctx, cancel := contextWithTimeout(5 * time.Second)
	defer cancel()
	start := time.Now()
	require.NoError(t, rt.Shutdown(sctx), "shutdown finishes within its deadline")
	t.Logf("shutdown with %d live commands took %s", n, time.Since(start))
	readers.Wait()
	close(terminals)
	// Frames to the actor owner were sent before Shutdown returned; it may
	// still be handling them.
	require.Eventually(t, func() bool { return o.count.Load() == n }, time.Minute, time.Millisecond)
	got := 0
	for term := range terminals {
		assert.Equal(t, "error:stopped_before_exit", term)
		got++
	}
	for _, fr := range o.snapshot()[n/2:] {
		assert.Equal(t, "error:stopped_before_exit", terminalText(fr))
		got++
	}
	assert.Equal(t, n, got, "every live command's subscriber got exactly one terminal frame")
	assert.Len(t, o.snapshot(), n, "the actor owner got one terminal frame per command after its output")
	f.Reset()
}

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

// eofExits is a fake whose "cat" stream exits once its stdin is closed,
// while the close itself, like a request still in flight, only returns
// when the runtime cancels it.
type eofExits struct{ *fake.Adapter }

type eofStream struct{ closed chan struct{} }

func (a eofExits) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, o paddock.SpawnOpts) (paddock.Stream, error) {
	if cmd.Path != "cat" {
		return a.Adapter.Spawn(ctx, h, cmd, o)
	}
	return &eofStream{closed: make(chan struct{})}, nil
}

func (s *eofStream) Next(ctx context.Context) (paddock.Event, error) {
	select {
	case <-s.closed:
		return paddock.Exit(0), nil
	case <-ctx.Done():
		return paddock.Event{}, ctx.Err()
	}
}

func (s *eofStream) CloseStdin(ctx context.Context) error {
	close(s.closed) // the command sees EOF and exits...
	<-ctx.Done()    // ...before the close's answer arrives
	return ctx.Err()
}
func (s *eofStream) WriteStdin(context.Context, []byte) error { return nil }
func (s *eofStream) Close() error                             { return nil }
func (s *eofStream) SessionID() string                        { return "" }

// A CloseStdin the command's exit cut short succeeds: closing the stdin of
// an exited command is fine.
func TestCloseStdinRacingTheExitSucceeds(t *testing.T) {
	t.Parallel()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": eofExits{fake.New()}}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)) })
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	s, err := spawn(rt, ctx, h, paddock.NewCmd("cat"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	require.NoError(t, s.CloseStdin(cctx))
	for range s.C() {
	}
}

// scripted is a fake whose Spawn, for the commands below, returns a stream
// that breaks the contract in one way.
type scripted struct {
	*fake.Adapter
	panicOnGet bool
}

// scriptedStream yields its events in turn, then behaves per its mode.
type scriptedStream struct {
	mu     sync.Mutex
	events []paddock.Event
	after  string // what Next does once events run out: "eof", "panic", "hang"
	stdin  string // what WriteStdin does: "ok", "panic"
	closed chan struct{}
	once   sync.Once
}

func (s *scriptedStream) Next(ctx context.Context) (paddock.Event, error) {
	s.mu.Lock()
	if len(s.events) > 0 {
		ev := s.events[0]
		s.events = s.events[1:]
		s.mu.Unlock()
		return ev, nil
	}
	s.mu.Unlock()
	switch s.after {
	case "panic":
		panic("adapter bug in Next")
	case "hang":
		select {
		case <-ctx.Done():
			return paddock.Event{}, ctx.Err()
		case <-s.closed:
			return paddock.Event{}, io.EOF
		}
	}
	return paddock.Event{}, io.EOF
}

func (s *scriptedStream) WriteStdin(context.Context, []byte) error {
	if s.stdin == "panic" {
		panic("adapter bug in WriteStdin")
	}
	return nil
}
func (s *scriptedStream) CloseStdin(context.Context) error { return nil }
func (s *scriptedStream) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}
func (s *scriptedStream) SessionID() string { return "" }

func (a *scripted) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, o paddock.SpawnOpts) (paddock.Stream, error) {
	out := paddock.Stdout([]byte("out"))
	st := &scriptedStream{after: "eof", stdin: "ok", closed: make(chan struct{})}
	switch cmd.Path {
	case "panics":
		st.events, st.after = []paddock.Event{out}, "panic"
	case "two-exits":
		st.events = []paddock.Event{out, paddock.Exit(0), paddock.Exit(1)}
	case "no-exit":
		st.events = []paddock.Event{out}
	case "exit-then-hang":
		st.events, st.after = []paddock.Event{out, paddock.Exit(0)}, "hang"
	case "stdin-panics":
		st.events, st.after, st.stdin = []paddock.Event{out}, "hang", "panic"
	case "spawn-panics":
		panic("adapter bug in Spawn")
	default:
		return a.Adapter.Spawn(ctx, h, cmd, o)
	}
	return st, nil
}

func (a *scripted) Get(ctx context.Context, h paddock.Handle) (paddock.Info, error) {
	if a.panicOnGet {
		panic("adapter bug in Get")
	}
	return a.Adapter.Get(ctx, h)
}

// engineEvents counts engine events the test cares about.
type engineEvents struct {
	e          *actor.Engine
	mu         sync.Mutex
	restarts   int
	violations []supervisor.Violation
	dead       int
}

func watchEvents(t *testing.T, e *actor.Engine) *engineEvents {
	ev := &engineEvents{e: e}
	ready := make(chan struct{})
	var once sync.Once
	pid := e.SpawnFunc(func(c *actor.Context) {
		switch m := c.Message().(type) {
		case actor.Started:
			c.Engine().Subscribe(c.PID())
			c.Engine().BroadcastEvent(eventsReady{})
		case actor.Stopped:
			c.Engine().Unsubscribe(c.PID())
		case eventsReady:
			once.Do(func() { close(ready) })
		case eventsFlushed:
			close(m.seen)
		case actor.ActorRestartedEvent, actor.ActorMaxRestartsExceededEvent:
			ev.mu.Lock()
			ev.restarts++
			ev.mu.Unlock()
		case supervisor.Violation:
			ev.mu.Lock()
			ev.violations = append(ev.violations, m)
			ev.mu.Unlock()
		case actor.DeadLetterEvent:
			ev.mu.Lock()
			ev.dead++
			ev.mu.Unlock()
		}
	}, "events")
	<-ready
	t.Cleanup(func() { <-e.Poison(pid).Done() })
	return ev
}

type eventsReady struct{}

// eventsFlushed is broadcast by flush; the watcher closes seen on it.
type eventsFlushed struct{ seen chan struct{} }

// flush returns once every event broadcast before it has been counted: the
// event stream is one actor and delivers in order.
func (e *engineEvents) flush(t *testing.T) {
	t.Helper()
	m := eventsFlushed{seen: make(chan struct{})}
	e.e.BroadcastEvent(m)
	select {
	case <-m.seen:
	case <-time.After(time.Minute):
		require.Fail(t, "the event stream did not deliver the flush marker")
	}
}

func (e *engineEvents) snapshot() []supervisor.Violation {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]supervisor.Violation(nil), e.violations...)
}

func (e *engineEvents) deadLetters() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dead
}

func TestMisbehavingAdapterStreams(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		cmd        string
		writeStdin bool
		terminal   string // "exit:<code>" or "error:<reason>"
		violation  string
	}{
		"a stream that panics":              {cmd: "panics", terminal: "error:adapter_panic"},
		"a stream that sends two exits":     {cmd: "two-exits", terminal: "exit:0", violation: supervisor.ViolationDuplicateTerminal},
		"a stream that closes with no exit": {cmd: "no-exit", terminal: "error:closed_before_exit"},
		"a stream that exits, then hangs":   {cmd: "exit-then-hang", terminal: "exit:0"},
		"a stream whose stdin write panics": {cmd: "stdin-panics", writeStdin: true, terminal: "error:adapter_panic"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := &scripted{Adapter: fake.New()}
			rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": a}})
			require.NoError(t, err)
			events := watchEvents(t, rt.Engine())
			t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)) })
			h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
			require.NoError(t, err)

			s, err := spawn(rt, ctx, h, paddock.NewCmd(tc.cmd), paddock.SpawnOpts{Stdin: true})
			require.NoError(t, err)
			first := frame(t, s)
			require.IsType(t, &messages.Stdout{}, first, "the output comes first")
			if tc.writeStdin {
				err := s.WriteStdin(ctx, []byte("x"))
				require.ErrorIs(t, err, paddock.ErrWriteFailed, "the panicking write is answered, not lost")
			}
			rest := all(t, s)
			require.Len(t, rest, 1, "exactly one terminal frame follows the output")
			assert.Equal(t, tc.terminal, terminalText(rest[0]))
			assert.Equal(t, uint64(2), rest[0].GetSeq())

			// The process lives on: the runtime still answers.
			res, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("emit", "out:alive"), paddock.ExecOpts{})
			require.NoError(t, err)
			assert.Equal(t, "alive", string(res.Stdout))
			if tc.violation != "" {
				// Events reach subscribers asynchronously.
				require.Eventually(t, func() bool { return len(events.snapshot()) == 1 }, time.Minute, time.Millisecond, "%v", events.snapshot())
				assert.Equal(t, tc.violation, events.snapshot()[0].What)
				assert.Equal(t, string(s.Subscription().Ref), events.snapshot()[0].Ref)
			}
			events.mu.Lock()
			defer events.mu.Unlock()
			assert.Zero(t, events.restarts, "no ActorRestartedEvent for our actors")
		})
	}
}

func terminalText(f messages.Frame) string {
	switch f := f.(type) {
	case *messages.Exit:
		return "exit:" + itoa(int(f.GetCode()))
	case *messages.Error:
		return "error:" + f.GetReason()
	}
	return "not terminal"
}

func TestAdapterPanicsInBlockingCallsAreErrors(t *testing.T) {
	t.Parallel()
	a := &scripted{Adapter: fake.New(), panicOnGet: true}
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": a}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)) })
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	_, err = rt.Adapter(h.Provider).Get(ctx, h)
	require.ErrorIs(t, err, paddock.ErrUnavailable)
	assert.Contains(t, err.Error(), "adapter_panic")
	_, err = spawn(rt, ctx, h, paddock.NewCmd("spawn-panics"), paddock.SpawnOpts{})
	require.ErrorIs(t, err, paddock.ErrUnavailable)
	require.NoError(t, rt.Adapter(h.Provider).Destroy(ctx, h), "the runtime keeps serving")
}

// TestAStreamReadToItsEndIsReleased runs 30,000 commands (an eighth under
// the race detector) whose streams are read to their terminal frame and
// never closed: the runtime keeps nothing for them, neither a sink nor
// memory that grows with the count.
//
// It measures the process's heap, so it runs alone (not parallel).
func TestAStreamReadToItsEndIsReleased(t *testing.T) {
	rt, f := startFake(t)
	h, err := rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	run := func(n int) {
		for i := range n {
			s, err := spawn(rt, ctx, h, paddock.NewCmd("emit", "out:"+itoa(i), "exit:0"), paddock.SpawnOpts{})
			require.NoError(t, err)
			var last messages.Frame
			for fr := range s.C() {
				last = fr
			}
			require.Equal(t, "exit:0", terminalText(last))
			if i%1000 == 999 {
				f.Reset() // the fake's own record of finished commands is not the runtime's
				h, err = rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
				require.NoError(t, err)
			}
		}
	}
	n := heavy.Volume(30_000)
	run(1000) // warm: pools and maps at their working size
	base := heapNow()
	run(n)
	require.Eventually(t, func() bool { return actors.LiveSinks(rt) == 0 }, time.Minute, time.Millisecond, "no sink outlives its stream's terminal frame")
	f.Reset()
	growth := int64(heapNow()) - int64(base)
	t.Logf("%d streams read to their end: heap %+d bytes (%.1f per stream)", n, growth, float64(growth)/float64(n))
	assert.Less(t, growth, int64(n)*256, "memory does not grow with the streams read to their end")
}
