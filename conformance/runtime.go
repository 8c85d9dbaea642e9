package conformance

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/messages"
)

// RunRuntime runs every case through rt for provider p (whose adapter is
// registered in rt) with plain-Go channel owners, then the cases about
// streams again with actor owners that grant credit through
// actors.Credits; the load case runs once, its turns' streams owned by
// channels and actors in turn. cfg.Adapter is ignored; every other field
// applies as in Run.
func RunRuntime(t *testing.T, rt *actors.Runtime, p paddock.Provider, cfg Config) {
	t.Helper()
	view, owned := rt.View(p), &actorOwned{View: rt.View(p), rt: rt}
	t.Run("channel owner", func(t *testing.T) {
		c := cfg
		c.Adapter, c.loadAdapter = view, &mixedOwners{View: view, owned: owned}
		Run(t, c)
	})
	t.Run("actor owner", func(t *testing.T) {
		c := cfg
		c.Adapter, c.streamsOnly = owned, true
		Run(t, c)
	})
}

// mixedOwners is the runtime view whose spawns are owned by a channel and
// an actor in turn.
type mixedOwners struct {
	*actors.View
	owned *actorOwned
	n     atomic.Uint64
}

func (m *mixedOwners) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, o paddock.SpawnOpts) (paddock.Stream, error) {
	if m.n.Add(1)%2 == 0 {
		return m.owned.Spawn(ctx, h, cmd, o)
	}
	return m.View.Spawn(ctx, h, cmd, o)
}

// actorOwned is the runtime view whose streams are owned by actors.
type actorOwned struct {
	*actors.View
	rt *actors.Runtime
}

func (a *actorOwned) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, o paddock.SpawnOpts) (paddock.Stream, error) {
	st := a.newOwned()
	c, session, err := a.rt.SpawnTo(ctx, st.owner, h, cmd, o, 0)
	if err != nil {
		st.stopOwner()
		return nil, err
	}
	st.cmd, st.session = c, session
	return st, nil
}

func (a *actorOwned) Attach(ctx context.Context, h paddock.Handle, id string, o paddock.AttachOpts) (paddock.Stream, error) {
	st := a.newOwned()
	c, err := a.rt.AttachTo(ctx, st.owner, h, id, o, 0)
	if err != nil {
		st.stopOwner()
		return nil, err
	}
	st.cmd, st.session = c, id
	return st, nil
}

func (a *actorOwned) Watch(ctx context.Context, h paddock.Handle, path string) (paddock.FileWatch, error) {
	st := a.newOwned()
	c, err := a.rt.WatchTo(ctx, st.owner, h, path, 0)
	if err != nil {
		st.stopOwner()
		return nil, err
	}
	st.cmd = c
	return paddock.WatchOf(st), nil
}

// ownedStream is a paddock.Stream fed by an owner actor.
type ownedStream struct {
	rt      *actors.Runtime
	owner   *actor.PID
	cmd     paddock.Subscription
	session string

	mu       sync.Mutex
	frames   []messages.Frame
	ready    chan struct{}
	done     bool
	closed   bool
	stopOnce sync.Once
}

func (a *actorOwned) newOwned() *ownedStream {
	st := &ownedStream{rt: a.rt, ready: make(chan struct{}, 1)}
	credits := actors.NewCredits(a.rt.Window())
	st.owner = a.rt.Engine().SpawnFunc(func(c *actor.Context) {
		if f, ok := c.Message().(messages.Frame); ok {
			st.push(f)
			credits.Consumed(c, f)
		}
	}, "conformance-owner")
	return st
}

func (s *ownedStream) push(f messages.Frame) {
	s.mu.Lock()
	if !s.closed {
		s.frames = append(s.frames, f)
	}
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

func (s *ownedStream) Next(ctx context.Context) (paddock.Event, error) {
	for {
		s.mu.Lock()
		if s.done || s.closed {
			s.mu.Unlock()
			return paddock.Event{}, io.EOF
		}
		if len(s.frames) > 0 {
			f := s.frames[0]
			s.frames = s.frames[1:]
			ev := actors.EventOf(f)
			s.done = ev.Kind.Terminal()
			s.mu.Unlock()
			if s.done {
				s.stopOwner()
			}
			return ev, nil
		}
		s.mu.Unlock()
		select {
		case <-s.ready:
		case <-ctx.Done():
			return paddock.Event{}, ctx.Err()
		}
	}
}

func (s *ownedStream) WriteStdin(ctx context.Context, p []byte) error {
	return s.rt.WriteStdin(ctx, s.cmd, p)
}
func (s *ownedStream) CloseStdin(ctx context.Context) error { return s.rt.CloseStdin(ctx, s.cmd) }
func (s *ownedStream) Signal(ctx context.Context, sig paddock.Signal) error {
	return s.rt.Signal(ctx, s.cmd, sig)
}
func (s *ownedStream) Resize(ctx context.Context, size paddock.TermSize) error {
	return s.rt.Resize(ctx, s.cmd, size)
}
func (s *ownedStream) SessionID() string { return s.session }

// Close detaches, then stops the owner actor.
func (s *ownedStream) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	_ = s.rt.StopCommand(context.Background(), s.cmd)
	s.stopOwner()
	return nil
}

func (s *ownedStream) stopOwner() {
	s.stopOnce.Do(func() { s.rt.Engine().Poison(s.owner) })
}
