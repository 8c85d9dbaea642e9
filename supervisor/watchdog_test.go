package supervisor_test

import (
	"sync"
	"testing"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock/supervisor"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notices collects OwnerDown notices.
type notices struct {
	mu   sync.Mutex
	down []string
}

func (n *notices) ids() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.down...)
}

func spawnWatcher(e *actor.Engine, n *notices) *actor.PID {
	return e.SpawnFunc(func(c *actor.Context) {
		if m, ok := c.Message().(supervisor.OwnerDown); ok {
			n.mu.Lock()
			n.down = append(n.down, m.PID.ID)
			n.mu.Unlock()
		}
	}, "watcher")
}

func spawnIdle(e *actor.Engine, kind string) *actor.PID {
	return e.SpawnFunc(func(*actor.Context) {}, kind)
}

func TestWatchdog(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	wd := e.Spawn(supervisor.NewWatchdog(), "watchdog", actor.WithMiddleware(supervisor.Recover(zerolog.Nop())))
	n := &notices{}
	watcher := spawnWatcher(e, n)

	owner := spawnIdle(e, "owner")
	kept := spawnIdle(e, "kept")
	unwatched := spawnIdle(e, "unwatched")
	e.Send(wd, supervisor.Watch{Target: owner, Watcher: watcher})
	e.Send(wd, supervisor.Watch{Target: kept, Watcher: watcher})
	e.Send(wd, supervisor.Watch{Target: unwatched, Watcher: watcher})
	e.Send(wd, supervisor.Unwatch{Target: unwatched, Watcher: watcher})

	gone := spawnIdle(e, "gone")
	<-e.Poison(gone).Done()
	e.Send(wd, supervisor.Watch{Target: gone, Watcher: watcher})
	waitFor(t, func() bool { return len(n.ids()) == 1 }, "a target already gone is reported at once")
	assert.Equal(t, []string{gone.ID}, n.ids())

	// The stop events reach the watchdog in the order the actors stopped,
	// and its notices reach the watcher in the order it sent them: once the
	// owner's notice is in, the earlier stop of the unwatched target has
	// been handled, and a notice for it would already be there.
	<-e.Poison(unwatched).Done()
	<-e.Poison(owner).Done()
	waitFor(t, func() bool { return len(n.ids()) == 2 }, "a stopped owner is reported")
	assert.Equal(t, []string{gone.ID, owner.ID}, n.ids(), "an unwatched target is not reported")

	// Likewise a watch answered at once (a target already gone) comes after
	// any answer to the remote watch sent before it.
	remote := actor.NewPID("10.0.0.1:4000", "owner/1")
	e.Send(wd, supervisor.Watch{Target: remote, Watcher: watcher})
	goneToo := spawnIdle(e, "gone-too")
	<-e.Poison(goneToo).Done()
	e.Send(wd, supervisor.Watch{Target: goneToo, Watcher: watcher})
	waitFor(t, func() bool { return len(n.ids()) == 3 }, "the later watch is answered")
	assert.Equal(t, []string{gone.ID, owner.ID, goneToo.ID}, n.ids(), "a remote target cannot be watched and is not reported")

	// Stopping the watchdog unsubscribes it: the stop of a target it watched
	// makes no dead letter to it, let alone a dead-letter storm. Two
	// flushes: a dead letter made while the event stream hands out the
	// first marker is itself handed out before the second.
	toWatchdog := recordEvents(t, e, func(m any) bool {
		dl, ok := m.(actor.DeadLetterEvent)
		return ok && dl.Target.Equals(wd)
	})
	<-e.Poison(wd).Done()
	<-e.Poison(kept).Done()
	toWatchdog.flush(t)
	toWatchdog.flush(t)
	require.Zero(t, toWatchdog.count(), "a stopped watchdog must not feed the dead-letter loop")
	<-e.Poison(watcher).Done()
}
