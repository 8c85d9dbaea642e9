package clocktest_test

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/clocktest"
	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var _ paddock.Clock = (*clocktest.Manual)(nil)

func TestManual(t *testing.T) {
	c := clocktest.New()
	start := c.Now()
	<-c.After(time.Second)
	assert.Equal(t, start.Add(time.Second), c.Now(), "After advances the clock and fires")
	c.Advance(time.Minute)
	assert.Equal(t, start.Add(61*time.Second), c.Now())
	assert.Equal(t, []time.Duration{time.Second}, c.Delays())

	f := clocktest.Frozen()
	asked := make(chan time.Duration, 2)
	f.NotifyAfter(asked)
	frozenAt := f.Now()
	hour := f.After(time.Hour)
	minute := f.After(time.Minute)
	assert.Equal(t, time.Hour, <-asked)
	assert.Equal(t, time.Minute, <-asked)
	assert.Equal(t, 2, f.Pending())
	f.Advance(2 * time.Hour)
	assert.Empty(t, hour, "Advance moves a frozen clock without firing")
	assert.Equal(t, frozenAt.Add(2*time.Hour), f.Now())

	g := clocktest.Frozen()
	gAt := g.Now()
	hour, minute = g.After(time.Hour), g.After(time.Minute)
	g.Tick(59 * time.Second)
	assert.Empty(t, minute, "nothing is due yet")
	g.Tick(time.Second)
	assert.Equal(t, gAt.Add(time.Minute), <-minute, "Tick fires what is due, at the new instant")
	assert.Empty(t, hour)
	assert.Equal(t, 1, g.Pending())
	g.Tick(time.Hour)
	assert.Equal(t, gAt.Add(61*time.Minute), <-hour)
	assert.Zero(t, g.Pending())
}
