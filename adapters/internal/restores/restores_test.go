package restores_test

import (
	"sync"
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/restores"
	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSinceSeesOnlyLaterRestoresOfItsSandbox(t *testing.T) {
	t.Parallel()
	var c restores.Counter
	c.Begin("a") // before: not seen
	sinceA, sinceB := c.Since("a"), c.Since("b")
	assert.False(t, sinceA())
	c.Begin("b")
	assert.False(t, sinceA(), "another sandbox's restore")
	assert.True(t, sinceB())
	c.Begin("a")
	assert.True(t, sinceA())
	assert.False(t, c.Since("a")(), "a check made after the restore began")
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	var c restores.Counter
	since := c.Since("x")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				c.Begin("x")
				_ = c.Since("x")()
			}
		})
	}
	wg.Wait()
	assert.True(t, since())
}
