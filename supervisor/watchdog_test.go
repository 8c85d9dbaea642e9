package supervisor_test

import (
	"sync"
	"testing"
	"time"

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

	<-e.Poison(owner).Done()
	<-e.Poison(unwatched).Done()
	waitFor(t, func() bool { return len(n.ids()) == 2 }, "a stopped owner is reported")
	time.Sleep(20 * time.Millisecond)
	assert.Equal(t, []string{gone.ID, owner.ID}, n.ids(), "an unwatched target is not reported")

	remote := actor.NewPID("10.0.0.1:4000", "owner/1")
	e.Send(wd, supervisor.Watch{Target: remote, Watcher: watcher})
	time.Sleep(20 * time.Millisecond)
	assert.Len(t, n.ids(), 2, "a remote target cannot be watched and is not reported")

	// Stopping the watchdog unsubscribes it: no dead-letter storm follows.
	dead := recordEvents(t, e, func(m any) bool { _, ok := m.(actor.DeadLetterEvent); return ok })
	<-e.Poison(wd).Done()
	<-e.Poison(kept).Done()
	time.Sleep(100 * time.Millisecond)
	require.Less(t, dead.count(), 10, "a stopped watchdog must not feed the dead-letter loop")
	<-e.Poison(watcher).Done()
}
