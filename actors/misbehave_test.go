package actors_test

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/messages"
	"github.com/paddockhq/paddock/supervisor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
