package actors

import (
	"context"
	"sync/atomic"

	"github.com/paddockhq/paddock/internal/telemetry"
)

// permits are the reads a command's reader may still make: the window at
// first, one more per output frame its owner credits, never more than the
// window. Taking one costs an atomic step; only a reader that found none
// waits, woken by the credit that gives it one.
type permits struct {
	n      atomic.Int64
	window int64
	wake   chan struct{} // holds a token while a credit may have woken a waiting reader
}

// newPermits returns window permits.
func newPermits(window int) *permits {
	p := &permits{window: int64(window), wake: make(chan struct{}, 1)}
	p.n.Store(int64(window))
	return p
}

// tryTake takes one permit if there is one.
func (p *permits) tryTake() bool {
	for {
		n := p.n.Load()
		if n <= 0 {
			return false
		}
		if p.n.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// take takes one permit, counting the command as waiting for credit while
// it has none (and calling stalled, when not nil, before it waits); false
// when ctx ended first.
func (p *permits) take(ctx context.Context, meter *telemetry.Stream, stalled func()) bool {
	if p.tryTake() {
		return true
	}
	if stalled != nil {
		stalled()
	}
	meter.Waiting(true)
	defer meter.Waiting(false)
	for {
		if p.tryTake() {
			return true
		}
		select {
		case <-p.wake:
		case <-ctx.Done():
			return false
		}
	}
}

// give adds n permits, up to the window (an owner crediting more than was
// sent gains nothing), and wakes a waiting reader.
func (p *permits) give(n int) {
	for {
		cur := p.n.Load()
		next := min(cur+int64(n), p.window)
		if next <= cur || p.n.CompareAndSwap(cur, next) {
			break
		}
	}
	select {
	case p.wake <- struct{}{}:
	default: // a token is there already: the reader will look again
	}
}
