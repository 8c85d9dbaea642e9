package admission

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// At most MaxCreates creates are in flight; the others wait for a slot
// and all get one.
func TestCreatesInFlightAreCapped(t *testing.T) {
	t.Parallel()
	g := New(0, 3, time.Minute)
	var inFlight, most atomic.Int64
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done, err := g.AdmitCreate(context.Background(), string(rune('a'+i)))
			assert.NoError(t, err)
			n := inFlight.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(5 * time.Millisecond) // a create takes a while
			inFlight.Add(-1)
			done(true)
		}()
	}
	wg.Wait()
	assert.EqualValues(t, 3, most.Load())
	assert.Zero(t, g.InFlight())
}

// Refusals are rate_limited with a hint; a zero wait refuses at once.
func TestRefusalIsRateLimited(t *testing.T) {
	t.Parallel()
	g := New(0, 1, 0)
	done, err := g.AdmitCreate(context.Background(), "a")
	require.NoError(t, err)
	_, err = g.AdmitCreate(context.Background(), "b")
	var rl *paddock.RateLimitedError
	require.ErrorAs(t, err, &rl)
	require.NotNil(t, rl.RetryAfter)
	assert.Positive(t, *rl.RetryAfter)
	done(true)
	done2, err := g.AdmitCreate(context.Background(), "b")
	require.NoError(t, err, "the slot is free again")
	done2(false)
}

// The sandbox limit counts live names: adopting a live one is free, a
// new one waits for a destroy, and a failed create frees its slot.
func TestSandboxLimit(t *testing.T) {
	t.Parallel()
	g := New(2, 0, time.Minute)
	for _, name := range []string{"a", "b"} {
		done, err := g.AdmitCreate(context.Background(), name)
		require.NoError(t, err)
		done(true)
	}
	again, err := g.AdmitCreate(context.Background(), "a")
	require.NoError(t, err, "adopting a live sandbox takes no new slot")
	again(true)
	var destroyed atomic.Bool
	admitted := make(chan bool, 1)
	go func() {
		done, err := g.AdmitCreate(context.Background(), "c")
		assert.NoError(t, err)
		admitted <- destroyed.Load() // only b's destroy can have made room
		done(false)
	}()
	require.Eventually(t, func() bool { return g.Waiting() == 1 }, time.Minute, time.Millisecond, "c waits")
	destroyed.Store(true)
	g.Destroyed("b")
	require.True(t, <-admitted, "c was admitted only once b was destroyed")
	done, err := g.AdmitCreate(context.Background(), "d")
	require.NoError(t, err, "c's failed create freed its slot")
	done(true)
}

// A wait ends with the caller's context, as rate_limited.
func TestWaitEndsWithTheContext(t *testing.T) {
	t.Parallel()
	g := New(0, 1, time.Hour)
	done, err := g.AdmitCreate(context.Background(), "a")
	require.NoError(t, err)
	defer done(true)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = g.AdmitCreate(ctx, "b")
	assert.ErrorIs(t, err, paddock.ErrRateLimited)
}

// After a rate_limited answer the whole provider is backed off: every
// operation waits out the hint, or is refused when it may not wait.
func TestThrottledBacksEveryCallerOff(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	g := New(0, 0, 0)
	g.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	d := 5 * time.Second
	g.Throttled(&d)
	err := g.Admit(context.Background())
	var rl *paddock.RateLimitedError
	require.ErrorAs(t, err, &rl)
	assert.Equal(t, 5*time.Second, *rl.RetryAfter, "the hint is what is left of the back-off")
	_, err = g.AdmitCreate(context.Background(), "a")
	require.True(t, errors.Is(err, paddock.ErrRateLimited), "creates too")
	mu.Lock()
	now = now.Add(5 * time.Second)
	mu.Unlock()
	require.NoError(t, g.Admit(context.Background()), "the back-off is over")
	g.Throttled(nil)
	err = g.Admit(context.Background())
	require.ErrorAs(t, err, &rl)
	assert.Equal(t, DefaultBackoff, *rl.RetryAfter, "no hint: the default")
}

// A caller that may wait waits the back-off out and goes through.
func TestThrottledWaitersGoThroughAfterTheBackoff(t *testing.T) {
	t.Parallel()
	g := New(0, 0, time.Minute)
	d := 100 * time.Millisecond
	g.Throttled(&d)
	start := time.Now()
	require.NoError(t, g.Admit(context.Background()))
	assert.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)
}
