package paddock_test

import (
	"sync"
	"time"
)

// fakeClock is a Clock for tests: After records the requested delay, advances
// the clock by it and fires at once, unless the clock is frozen, when After
// never fires.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	delays []time.Duration
	frozen bool
	asked  chan time.Duration // receives each requested delay, if set
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.delays = append(c.delays, d)
	frozen, asked := c.frozen, c.asked
	ch := make(chan time.Time, 1)
	if !frozen {
		c.now = c.now.Add(d)
		ch <- c.now
	}
	c.mu.Unlock()
	if asked != nil {
		asked <- d
	}
	return ch
}

func (c *fakeClock) Delays() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.delays...)
}
