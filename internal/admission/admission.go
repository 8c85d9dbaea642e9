// Package admission is the runtime's per-provider admission control: how
// many sandboxes may be live and how many creates in flight at once, and
// a back-off of the whole provider after it answered rate_limited. A call
// beyond a limit waits for room, bounded by its context and the wait the
// limits allow, and is otherwise refused with rate_limited carrying a
// retry hint: it never reaches the provider to fail there.
package admission

import (
	"context"
	"sync"
	"time"

	"github.com/paddockhq/paddock"
)

// DefaultBackoff is how long the provider is backed off after a
// rate_limited answer without a retry hint.
const DefaultBackoff = time.Second

// Gate enforces one provider's limits. It is safe for concurrent use.
type Gate struct {
	maxSandboxes int           // sandboxes live at once; 0 = no limit
	maxCreates   int           // creates in flight at once; 0 = no limit
	maxWait      time.Duration // how long a call may wait for room
	now          func() time.Time

	mu        sync.Mutex
	changed   chan struct{}   // closed and replaced whenever room may have appeared
	inFlight  int             // creates under way
	live      map[string]bool // sandboxes live through this runtime
	reserved  map[string]int  // creates under way of names not live yet
	notBefore time.Time       // the provider is backed off until then
	waiting   int             // calls waiting for room
}

// New returns the gate of one provider's limits (actors.Admission): at
// most maxSandboxes live and maxCreates in flight, a zero being no limit,
// and a call waiting at most wait for room.
func New(maxSandboxes, maxCreates int, wait time.Duration) *Gate {
	return &Gate{maxSandboxes: maxSandboxes, maxCreates: maxCreates, maxWait: wait, now: time.Now, changed: make(chan struct{}),
		live: map[string]bool{}, reserved: map[string]int{}}
}

// Admit lets an operation other than a create through once the provider
// is not backed off.
func (g *Gate) Admit(ctx context.Context) error {
	return g.wait(ctx, func() bool { return true })
}

// AdmitCreate lets a create of name through once a create slot is free
// and, for a name not live yet, a sandbox slot; done must be called when
// the create ended, saying whether the sandbox exists now.
func (g *Gate) AdmitCreate(ctx context.Context, name string) (done func(created bool), err error) {
	err = g.wait(ctx, func() bool {
		if g.maxCreates > 0 && g.inFlight >= g.maxCreates {
			return false
		}
		if g.maxSandboxes > 0 && !g.live[name] && g.reserved[name] == 0 &&
			len(g.live)+g.pendingNew() >= g.maxSandboxes {
			return false
		}
		g.inFlight++
		g.reserved[name]++
		return true
	})
	if err != nil {
		return nil, err
	}
	var once sync.Once
	return func(created bool) {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.inFlight--
			if g.reserved[name]--; g.reserved[name] <= 0 {
				delete(g.reserved, name)
			}
			if created {
				g.live[name] = true
			}
			g.wake()
		})
	}, nil
}

// pendingNew is how many creates under way are of names not live yet;
// g.mu is held.
func (g *Gate) pendingNew() int {
	n := 0
	for name := range g.reserved {
		if !g.live[name] {
			n++
		}
	}
	return n
}

// Destroyed frees name's sandbox slot.
func (g *Gate) Destroyed(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.live, name)
	g.wake()
}

// Throttled backs the whole provider off for retryAfter (DefaultBackoff
// when nil): it answered rate_limited.
func (g *Gate) Throttled(retryAfter *time.Duration) {
	d := DefaultBackoff
	if retryAfter != nil && *retryAfter > 0 {
		d = *retryAfter
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if until := g.now().Add(d); until.After(g.notBefore) {
		g.notBefore = until
	}
}

// InFlight is how many creates are under way now.
func (g *Gate) InFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inFlight
}

// wake tells waiters that room may have appeared; g.mu is held.
func (g *Gate) wake() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// minHint is the least retry hint of a refusal: room frees as calls end.
const minHint = 100 * time.Millisecond

// wait takes room as take decides (with g.mu held), once the provider is
// not backed off, waiting until ctx ends or maxWait is over;
// then it answers rate_limited with a hint.
func (g *Gate) wait(ctx context.Context, take func() bool) error {
	deadline := g.now().Add(g.maxWait)
	for {
		g.mu.Lock()
		now := g.now()
		backoff := g.notBefore.Sub(now)
		if backoff <= 0 && take() {
			g.mu.Unlock()
			return nil
		}
		changed := g.changed
		hint := max(backoff, minHint)
		left := deadline.Sub(now)
		if left <= 0 {
			g.mu.Unlock()
			return &paddock.RateLimitedError{RetryAfter: &hint}
		}
		g.waiting++
		g.mu.Unlock()
		sleep := left
		if backoff > 0 {
			sleep = min(left, backoff)
		}
		t := time.NewTimer(sleep)
		var ended bool
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
			ended = true
		}
		t.Stop()
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
		if ended {
			return &paddock.RateLimitedError{RetryAfter: &hint}
		}
	}
}

// Waiting is how many calls wait for room now.
func (g *Gate) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting
}
