// Package clocktest is a manual paddock.Clock for tests, so nothing sleeps:
// a Manual clock's After either fires at once (advancing the clock by the
// delay) or, frozen, never fires by itself.
package clocktest

import (
	"sync"
	"time"
)

// Manual is a paddock.Clock under the test's control. The zero value is not
// usable; call New.
type Manual struct {
	mu     sync.Mutex
	now    time.Time
	delays []time.Duration
	frozen bool
	asked  chan time.Duration
	timers []timer // a frozen clock's pending Afters, for Tick
}

// timer is one pending After of a frozen clock.
type timer struct {
	at time.Time
	ch chan time.Time
}

// New returns a clock at a fixed instant whose After fires at once.
func New() *Manual { return &Manual{now: time.Unix(1_700_000_000, 0)} }

// Frozen returns a clock whose After never fires on its own.
func Frozen() *Manual {
	c := New()
	c.frozen = true
	return c
}

// NotifyAfter makes every After call send its delay to ch (for a test that
// must know a wait began).
func (c *Manual) NotifyAfter(ch chan time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = ch
}

// Now returns the clock's instant.
func (c *Manual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward.
func (c *Manual) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// After records d; unless frozen it advances the clock by d and fires.
func (c *Manual) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.delays = append(c.delays, d)
	ch := make(chan time.Time, 1)
	if c.frozen {
		c.timers = append(c.timers, timer{at: c.now.Add(d), ch: ch})
	} else {
		c.now = c.now.Add(d)
		ch <- c.now
	}
	asked := c.asked
	c.mu.Unlock()
	if asked != nil {
		asked <- d
	}
	return ch
}

// Delays returns every delay After was asked for, in order.
func (c *Manual) Delays() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.delays...)
}

// Tick moves a frozen clock forward by d and fires every pending After
// that is then due (Advance moves it without firing any).
func (c *Manual) Tick(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	pending := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(c.now) {
			pending = append(pending, t)
			continue
		}
		t.ch <- c.now
	}
	c.timers = pending
}

// Pending is how many of a frozen clock's Afters have not fired.
func (c *Manual) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}
