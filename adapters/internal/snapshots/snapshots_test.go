package snapshots_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/snapshots"
	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNamesSayTheirSandboxAndTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 5, 20, 0, 0, 123e6, time.UTC)
	for _, name := range []string{"box", "Box With Spaces/and ünïcode", "x"} {
		n := snapshots.New(name, at)
		assert.Regexp(t, regexp.MustCompile(`^paddock-[0-9a-f]{16}-[0-9a-z]+-[0-9a-f]{8}$`), n, "letters and digits a provider takes")
		assert.True(t, snapshots.Owns(name, n))
		assert.False(t, snapshots.Owns(name+"2", n), "never another sandbox's")
		assert.Equal(t, snapshots.Key(name), snapshots.KeyOf(n))
		assert.True(t, at.Equal(snapshots.Time(n)), "%s", n)
		assert.NotEqual(t, n, snapshots.New(name, at), "two at one moment differ")
	}
	for _, other := range []string{"", "paddock-", "mine", "paddock-short-x"} {
		assert.Empty(t, snapshots.KeyOf(other), other)
		assert.True(t, snapshots.Time(other).IsZero(), other)
	}
}

func TestGoneCountsFromWhenItIsFoundGone(t *testing.T) {
	t.Parallel()
	var g snapshots.Gone
	t0 := time.Unix(1000, 0)
	alive, dead := snapshots.New("alive", t0), snapshots.New("dead", t0)
	names := []string{alive, dead, "someone-elses"}
	live := func(key string) bool { return key == snapshots.Key("alive") }
	assert.Empty(t, g.Doomed(names, live, time.Hour, t0), "first found gone: the clock starts")
	assert.Empty(t, g.Doomed(names, live, time.Hour, t0.Add(time.Hour)), "not past the retention")
	assert.Equal(t, []string{dead}, g.Doomed(names, live, time.Hour, t0.Add(time.Hour+1)))
	assert.Empty(t, g.Doomed(names, live, -1, t0.Add(100*time.Hour)), "a negative retention keeps them")
	g.Forget(dead)
	assert.Empty(t, g.Doomed(names, live, time.Hour, t0.Add(200*time.Hour)), "forgotten: found gone again, from now")
	back := func(string) bool { return true }
	assert.Empty(t, g.Doomed(names, back, time.Hour, t0.Add(300*time.Hour)), "its sandbox is back")
	assert.Empty(t, g.Doomed(names, live, time.Hour, t0.Add(300*time.Hour+time.Minute)), "the clock starts again")
}
