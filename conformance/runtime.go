package conformance

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/pending"
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

// ownedStream is a paddock.Stream fed by an owner actor, which credits
// the command as frames arrive (the window bounds what it queues).
type ownedStream struct {
	client.Controls
	rt       *actors.Runtime
	owner    *actor.PID
	cmd      *messages.CommandRef
	session  string
	frames   *pending.Queue[messages.Frame]
	stopOnce sync.Once
}

func (a actorOwners) newOwned() *ownedStream {
	st := &ownedStream{rt: a.rt, frames: pending.New(messages.IsTerminal)}
	st.Controls = client.Controls{T: a.Transport, Ref: func(context.Context) (*messages.CommandRef, error) { return st.cmd, nil }}
	credits := actors.NewCredits(a.rt.Window())
	st.owner = a.rt.Engine().SpawnFunc(func(c *actor.Context) {
		if f, ok := c.Message().(messages.Frame); ok {
			st.frames.Push(f)
			credits.Consumed(c, f)
		}
	}, "conformance-owner")
	return st
}

// Next returns the next frame as its event; after the terminal one the
// owner actor stops.
func (s *ownedStream) Next(ctx context.Context) (paddock.Event, error) {
	f, err := s.frames.Next(ctx)
	if err != nil {
		return paddock.Event{}, err
	}
	ev := actors.EventOf(f)
	if ev.Kind.Terminal() {
		s.stopOwner()
	}
	return ev, nil
}

func (s *ownedStream) SessionID() string { return s.session }

// Close detaches, then stops the owner actor.
func (s *ownedStream) Close() error {
	s.frames.Close()
	_ = s.Stop(context.Background())
	s.stopOwner()
	return nil
}

func (s *ownedStream) stopOwner() {
	s.stopOnce.Do(func() { s.rt.Engine().Poison(s.owner) })
}
