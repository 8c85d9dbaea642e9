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
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/messages"
)

// RunRuntime runs every case through rt for provider p (whose adapter is
// registered in rt) with plain-Go channel owners (rt.Adapter(p)), then the
// cases about streams again with actor owners that grant credit through
// actors.Credits; the load case runs once, its turns' streams owned by
// channels and actors in turn. cfg.Adapter is ignored; every other field
// applies as in Run.
func RunRuntime(t *testing.T, rt *actors.Runtime, p paddock.Provider, cfg Config) {
	t.Helper()
	channels, owned := rt.Adapter(p), client.New(actorOwners{Transport: rt.Transport(), rt: rt}, p)
	t.Run("channel owner", func(t *testing.T) {
		c := cfg
		c.Adapter, c.loadAdapter = channels, &mixedOwners{Client: channels, owned: owned}
		Run(t, c)
	})
	t.Run("actor owner", func(t *testing.T) {
		c := cfg
		c.Adapter, c.streamsOnly = owned, true
		Run(t, c)
	})
}

// mixedOwners is the runtime's adapter whose spawns are owned by a channel
// and an actor in turn.
type mixedOwners struct {
	*client.Client
	owned *client.Client
	n     atomic.Uint64
}

func (m *mixedOwners) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, o paddock.SpawnOpts) (paddock.Stream, error) {
	if m.n.Add(1)%2 == 0 {
		return m.owned.Spawn(ctx, h, cmd, o)
	}
	return m.Client.Spawn(ctx, h, cmd, o)
}

// actorOwners is the runtime's transport with streams owned by actors.
type actorOwners struct {
	client.Transport
	rt *actors.Runtime
}

// Open names an owner actor of its own as the recipient of q's frames.
func (a actorOwners) Open(ctx context.Context, q client.Request) (paddock.Stream, client.Reply, error) {
	st := a.newOwned()
	owner := messages.PidOf(st.owner)
	switch q := q.(type) {
	case *messages.SpawnRequest:
		q.Owner = owner
	case *messages.AttachRequest:
		q.Owner, st.session = owner, q.GetSessionId()
	case *messages.WatchRequest:
		q.Owner = owner
	}
	r, err := a.Call(ctx, q, 0)
	opened, ok := r.(interface{ GetCommand() *messages.CommandRef })
	if err != nil || !ok || r.GetFailure() != nil {
		st.stopOwner()
		return nil, r, err
	}
	st.cmd = opened.GetCommand()
	if sr, ok := r.(*messages.SpawnReply); ok {
		st.session = sr.GetSessionId()
	}
	return st, r, nil
}

// ownedStream is a paddock.Stream fed by an owner actor.
type ownedStream struct {
	client.Controls
	rt      *actors.Runtime
	owner   *actor.PID
	cmd     *messages.CommandRef
	session string

	mu       sync.Mutex
	frames   []messages.Frame
	ready    chan struct{}
	done     bool
	closed   bool
	stopOnce sync.Once
}

func (a actorOwners) newOwned() *ownedStream {
	st := &ownedStream{rt: a.rt, ready: make(chan struct{}, 1)}
	st.Controls = client.Controls{T: a.Transport, Ref: func(context.Context) (*messages.CommandRef, error) { return st.cmd, nil }}
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

func (s *ownedStream) SessionID() string { return s.session }

// Close detaches, then stops the owner actor.
func (s *ownedStream) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	_ = s.Stop(context.Background())
	s.stopOwner()
	return nil
}

func (s *ownedStream) stopOwner() {
	s.stopOnce.Do(func() { s.rt.Engine().Poison(s.owner) })
}
