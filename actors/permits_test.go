package actors

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A reader has the window's permits at first, waits once they are spent
// until a credit gives more, never holds more than the window however much
// is credited, and stops waiting when its context ends.
func TestPermits(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang bound
	defer cancel()
	p := newPermits(3)
	for range 3 {
		require.True(t, p.tryTake())
	}
	require.False(t, p.tryTake(), "the window is spent")

	took, waiting := make(chan bool), make(chan struct{})
	go func() { took <- p.take(ctx, nil, func() { close(waiting) }) }()
	<-waiting // the reader found none and is about to wait
	select {
	case <-took:
		t.Fatal("took a permit nobody gave")
	default:
	}
	p.give(1)
	require.True(t, <-took, "a credit wakes the waiting reader")

	p.give(100)
	for range 3 {
		require.True(t, p.tryTake())
	}
	require.False(t, p.tryTake(), "never more than the window")

	ended, stop := context.WithCancel(ctx)
	stop()
	require.False(t, p.take(ended, nil, nil), "an ended context stops the wait")

	// Credits racing a reader that waits again and again: no wake-up is
	// lost (a lost one would leave the reader waiting for good).
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
				p.give(1)
				runtime.Gosched()
			}
		}
	})
	for range 10_000 {
		require.True(t, p.take(ctx, nil, nil))
	}
	close(done)
	wg.Wait()
}
