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
	asked := make(chan time.Duration, 1)
	f.NotifyAfter(asked)
	ch := f.After(time.Hour)
	assert.Equal(t, time.Hour, <-asked)
	select {
	case <-ch:
		t.Fatal("a frozen clock never fires by itself")
	case <-time.After(10 * time.Millisecond):
	}
	assert.Equal(t, start, f.Now().Add(0).Add(start.Sub(f.Now())), "frozen time stands still")
}
