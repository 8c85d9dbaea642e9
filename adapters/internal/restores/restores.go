// Package restores counts, per sandbox, the restores an adapter began, so
// a command a restore ends can say so (unavailable(checkpoint_restored))
// rather than report its kill's exit or a lost connection.
package restores

import "sync"

// Counter counts restores by sandbox name. The zero Counter is ready; it
// is safe for concurrent use.
type Counter struct {
	mu sync.Mutex
	n  map[string]uint64
}

// Begin records a restore of sandbox starting now.
func (c *Counter) Begin(sandbox string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]uint64{}
	}
	c.n[sandbox]++
}

// Since returns whether a restore of sandbox began after this call.
func (c *Counter) Since(sandbox string) func() bool {
	c.mu.Lock()
	start := c.n[sandbox]
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.n[sandbox] > start
	}
}
