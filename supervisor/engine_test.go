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
		case flushMarker:
			close(m.seen)
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

// flushMarker is broadcast by flush; the recorder closes seen when the
// event stream hands it over.
type flushMarker struct{ seen chan struct{} }

// flush returns once every event broadcast before it has reached the
// recorder: the event stream is one actor, so it delivers in order.
func (r *events) flush(t *testing.T) {
	t.Helper()
	m := flushMarker{seen: make(chan struct{})}
	r.e.BroadcastEvent(m)
	select {
	case <-m.seen:
	case <-time.After(time.Minute):
		require.Fail(t, "the event stream did not deliver the flush marker")
	}
}

func (r *events) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// waitFor polls cond for up to two seconds.
func waitFor(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, time.Minute, time.Millisecond, msg)
}
