package supervisor_test

import (
	"sync"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/stretchr/testify/require"
)

// newEngine returns a local engine.
func newEngine(t *testing.T) *actor.Engine {
	e, err := actor.NewEngine(actor.NewEngineConfig())
	require.NoError(t, err)
	return e
}

// events records engine events of the given types; stop it before the test
// ends.
type events struct {
	mu   sync.Mutex
	seen []any
	pid  *actor.PID
	e    *actor.Engine
}

func recordEvents(t *testing.T, e *actor.Engine, keep func(any) bool) *events {
	rec := &events{e: e}
	ready := make(chan struct{})
	rec.pid = e.SpawnFunc(func(c *actor.Context) {
		switch m := c.Message().(type) {
		case actor.Started:
			c.Engine().Subscribe(c.PID())
			c.Engine().BroadcastEvent(recorderReady{})
		case actor.Stopped:
			c.Engine().Unsubscribe(c.PID())
		case recorderReady:
			select {
			case <-ready:
			default:
				close(ready)
			}
		default:
			if keep(m) {
				rec.mu.Lock()
				rec.seen = append(rec.seen, m)
				rec.mu.Unlock()
			}
		}
	}, "recorder")
	<-ready
	t.Cleanup(func() { <-e.Poison(rec.pid).Done() })
	return rec
}

type recorderReady struct{}

func (r *events) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// waitFor polls cond for up to two seconds.
func waitFor(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 2*time.Second, time.Millisecond, msg)
}
