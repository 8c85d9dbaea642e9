package reaping

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDecide(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	old, recent := now.Add(-3*time.Hour), now.Add(-time.Minute)
	lapsed := paddock.Lease{Owner: "gone", Until: now.Add(-time.Second)}
	live := paddock.Lease{Owner: "alive", Until: now.Add(time.Minute)}
	mineLapsed := paddock.Lease{Owner: "me", Until: now.Add(-time.Hour)}
	cases := []struct {
		name string
		f    Facts
		want Action
	}{
		{"nothing known", Facts{}, None},
		{"past its maximum age", Facts{Created: old, MaxAge: time.Hour}, Destroy},
		{"maximum age beats a live lease", Facts{Created: old, MaxAge: time.Hour, Lease: live}, Destroy},
		{"maximum age not reached", Facts{Created: recent, MaxAge: time.Hour}, None},
		{"no maximum age", Facts{Created: old}, None},
		{"lapsed lease of another runtime", Facts{Created: recent, Lease: lapsed}, Orphan},
		{"live lease of another runtime", Facts{Created: recent, Lease: live, Running: true}, None},
		{"lapsed lease of the reaping runtime", Facts{Created: recent, Lease: mineLapsed}, None},
		{"lapsed lease but unknown creation", Facts{Lease: lapsed}, None},
		{"an owner without an end never lapses", Facts{Created: old, Lease: paddock.Lease{Owner: "gone"}}, None},
		{"owner known gone", Facts{Created: recent, Orphan: true}, Orphan},
		{"idle and running", Facts{Created: old, Idle: time.Hour, Running: true}, Stop},
		{"idle but stopped", Facts{Created: old, Idle: time.Hour}, None},
		{"used recently", Facts{Created: old, Idle: time.Hour, Running: true, LastUsed: recent}, None},
		{"idle, held by a live lease", Facts{Created: old, Idle: time.Hour, Running: true, Lease: live}, Stop},
		{"stamp older than creation", Facts{Created: recent, Idle: time.Hour, Running: true, LastUsed: old}, None},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, c.want, Decide(c.f, now, "me"))
		})
	}
}

func TestSweep(t *testing.T) {
	t.Parallel()
	now := time.Now()
	all := []Facts{
		{Name: "old", Created: now.Add(-2 * time.Hour), MaxAge: time.Hour},
		{Name: "orphan", Created: now, Lease: paddock.Lease{Owner: "gone", Until: now.Add(-time.Second)}},
		{Name: "idle", Created: now.Add(-2 * time.Hour), Idle: time.Hour, Running: true},
		{Name: "broken", Created: now, Orphan: true},
		{Name: "kept", Created: now, Lease: paddock.Lease{Owner: "alive", Until: now.Add(time.Hour)}},
	}
	for _, dry := range []bool{true, false} {
		var mu sync.Mutex
		var calls []string
		act := func(kind string) func(context.Context, string) error {
			return func(_ context.Context, name string) error {
				mu.Lock()
				defer mu.Unlock()
				calls = append(calls, kind+" "+name)
				if name == "broken" {
					return errors.New("refused")
				}
				return nil
			}
		}
		report, err := Sweep(context.Background(), paddock.ReapOpts{Owner: "me", DryRun: dry}, now, all, act("destroy"), act("stop"))
		want := paddock.ReapReport{Destroyed: []string{"old"}, Stopped: []string{"idle"}, Orphaned: []string{"orphan"}, DryRun: dry}
		if dry {
			want.Orphaned = []string{"orphan", "broken"}
			require.NoError(t, err)
			assert.Empty(t, calls, "a dry run changes nothing")
		} else {
			require.ErrorContains(t, err, "refused")
			assert.Equal(t, []string{"destroy old", "destroy orphan", "stop idle", "destroy broken"}, calls)
		}
		assert.Equal(t, want, report)
	}
}

func TestEachBoundsItsWidth(t *testing.T) {
	t.Parallel()
	var in, most atomic.Int32
	names := make([]string, 40)
	for i := range names {
		names[i] = string(rune('a' + i))
	}
	release := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- Each(context.Background(), len(names), 3, func(context.Context, int) error {
			n := in.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			<-release
			in.Add(-1)
			return nil
		})
	}()
	require.Eventually(t, func() bool { return in.Load() == 3 }, time.Minute, time.Millisecond)
	close(release)
	require.NoError(t, <-done)
	assert.Equal(t, int32(3), most.Load())
}

func TestEachJoinsErrorsAndStopsOnCancel(t *testing.T) {
	t.Parallel()
	err := Each(context.Background(), 2, 2, func(_ context.Context, i int) error {
		if i == 1 {
			return errors.New("b failed")
		}
		return nil
	})
	require.ErrorContains(t, err, "b failed")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var ran atomic.Int32
	err = Each(ctx, 3, 1, func(context.Context, int) error { ran.Add(1); return nil })
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, ran.Load())
}

func TestOwnedAndRenew(t *testing.T) {
	t.Parallel()
	all := []Facts{{Name: "a", Lease: paddock.Lease{Owner: "me"}}, {Name: "b", Lease: paddock.Lease{Owner: "you"}}, {Name: "c", Lease: paddock.Lease{Owner: "me"}}}
	assert.Equal(t, []string{"a", "c"}, Owned(all, "me"))
	assert.Empty(t, Owned(all, "nobody"))

	var mu sync.Mutex
	var claimed []string
	err := Renew(context.Background(), all, func(f Facts) string { return f.Name }, []string{"c", "gone", "a"}, 2,
		func(_ context.Context, f Facts) error {
			mu.Lock()
			defer mu.Unlock()
			claimed = append(claimed, f.Name)
			return nil
		})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a", "c"}, claimed, "listed and named: claimed; named but not listed: skipped")
}

func TestSweepWithoutStop(t *testing.T) {
	t.Parallel()
	now := time.Now()
	idle := []Facts{{Name: "idle", Created: now.Add(-2 * time.Hour), Idle: time.Hour, Running: true}}
	report, err := Sweep(context.Background(), paddock.ReapOpts{}, now, idle, func(context.Context, string) error { return nil }, nil)
	require.NoError(t, err)
	assert.Empty(t, report.Stopped, "no stop: the provider parks idle sandboxes itself")
}

// A reap judges a sandbox at the time its reading began: a lease that was
// live when read is never orphaned because reading the other sandboxes
// took longer than what was left of it.
func TestReapJudgesWhenTheReadingBegan(t *testing.T) {
	t.Parallel()
	var destroyed []string
	k := Keeper{
		Facts: func(context.Context) ([]Facts, error) {
			live := Facts{Name: "live", Created: time.Now().Add(-time.Minute),
				Lease: paddock.Lease{Owner: "other", Until: time.Now().Add(time.Millisecond)}}
			time.Sleep(20 * time.Millisecond) // the rest of a slow listing, past the lease's end
			return []Facts{live}, nil
		},
		Destroy: func(_ context.Context, name string) error { destroyed = append(destroyed, name); return nil },
	}
	report, err := k.Reap(t.Context(), paddock.ReapOpts{Owner: "me"})
	require.NoError(t, err)
	assert.Empty(t, report.Orphaned)
	assert.Empty(t, destroyed)
}
