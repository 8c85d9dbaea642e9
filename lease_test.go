package paddock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/fake"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLeaseLapsed(t *testing.T) {
	t.Parallel()
	now := time.Now()
	cases := []struct {
		name         string
		lease        paddock.Lease
		zero, lapsed bool
	}{
		{"no lease", paddock.Lease{}, true, false},
		{"live", paddock.Lease{Owner: "a", Until: now.Add(time.Second)}, false, false},
		{"lapsed", paddock.Lease{Owner: "a", Until: now.Add(-time.Second)}, false, true},
		{"an owner without an end", paddock.Lease{Owner: "a"}, false, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.zero, c.lease.IsZero(), c.name)
		assert.Equal(t, c.lapsed, c.lease.Lapsed(now), c.name)
	}
}

func TestJudge(t *testing.T) {
	t.Parallel()
	type Facts = paddock.SandboxFacts
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	old, recent := now.Add(-3*time.Hour), now.Add(-time.Minute)
	lapsed := paddock.Lease{Owner: "gone", Until: now.Add(-time.Second)}
	live := paddock.Lease{Owner: "alive", Until: now.Add(time.Minute)}
	mineLapsed := paddock.Lease{Owner: "me", Until: now.Add(-time.Hour)}
	cases := []struct {
		name string
		f    Facts
		want paddock.ReapAction
	}{
		{"nothing known", Facts{}, paddock.ReapNone},
		{"past its maximum age", Facts{Created: old, MaxAge: time.Hour}, paddock.ReapDestroy},
		{"maximum age beats a live lease", Facts{Created: old, MaxAge: time.Hour, Lease: live}, paddock.ReapDestroy},
		{"maximum age not reached", Facts{Created: recent, MaxAge: time.Hour}, paddock.ReapNone},
		{"no maximum age", Facts{Created: old}, paddock.ReapNone},
		{"lapsed lease of another runtime", Facts{Created: recent, Lease: lapsed}, paddock.ReapOrphan},
		{"live lease of another runtime", Facts{Created: recent, Lease: live, Running: true}, paddock.ReapNone},
		{"lapsed lease of the reaping runtime", Facts{Created: recent, Lease: mineLapsed}, paddock.ReapNone},
		{"lapsed lease but unknown creation", Facts{Lease: lapsed}, paddock.ReapNone},
		{"an owner without an end never lapses", Facts{Created: old, Lease: paddock.Lease{Owner: "gone"}}, paddock.ReapNone},
		{"owner known gone", Facts{Created: recent, Orphan: true}, paddock.ReapOrphan},
		{"idle and running", Facts{Created: old, Idle: time.Hour, Running: true}, paddock.ReapStop},
		{"idle but stopped", Facts{Created: old, Idle: time.Hour}, paddock.ReapNone},
		{"used recently", Facts{Created: old, Idle: time.Hour, Running: true, LastUsed: recent}, paddock.ReapNone},
		{"idle, held by a live lease", Facts{Created: old, Idle: time.Hour, Running: true, Lease: live}, paddock.ReapStop},
		{"stamp older than creation", Facts{Created: recent, Idle: time.Hour, Running: true, LastUsed: old}, paddock.ReapNone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, c.want, paddock.Judge(c.f, now, "me"))
		})
	}
}

// keeper is a lease keeper over a fake whose facts the test sets, and
// which records what a reap did.
type keeper struct {
	*fake.Adapter
	facts   func() []paddock.SandboxFacts
	mu      sync.Mutex
	calls   []string
	stopper bool
}

func (k *keeper) SandboxFacts(context.Context) ([]paddock.SandboxFacts, error) { return k.facts(), nil }
func (k *keeper) RenewLeases(context.Context, []string, paddock.Lease) error   { return nil }
func (k *keeper) Reclaim(_ context.Context, f paddock.SandboxFacts) error {
	return k.did("destroy " + f.Name)
}

// stopping is a keeper that is an IdleStopper too.
type stopping struct{ *keeper }

func (s stopping) StopIdle(_ context.Context, f paddock.SandboxFacts) error {
	return s.did("stop " + f.Name)
}

func (k *keeper) did(call string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls = append(k.calls, call)
	if call == "destroy broken" {
		return errors.New("refused")
	}
	return nil
}

func TestReap(t *testing.T) {
	t.Parallel()
	now := time.Now()
	all := []paddock.SandboxFacts{
		{Name: "old", Created: now.Add(-2 * time.Hour), MaxAge: time.Hour},
		{Name: "orphan", Created: now, Lease: paddock.Lease{Owner: "gone", Until: now.Add(-time.Second)}},
		{Name: "idle", Created: now.Add(-2 * time.Hour), Idle: time.Hour, Running: true},
		{Name: "broken", Created: now, Orphan: true},
		{Name: "kept", Created: now, Lease: paddock.Lease{Owner: "alive", Until: now.Add(time.Hour)}},
	}
	for _, dry := range []bool{true, false} {
		k := &keeper{Adapter: fake.New(), facts: func() []paddock.SandboxFacts { return all }}
		report, err := paddock.Reap(context.Background(), stopping{k}, paddock.ReapOpts{Owner: "me", DryRun: dry})
		want := paddock.ReapReport{Destroyed: []string{"old"}, Stopped: []string{"idle"}, Orphaned: []string{"orphan"}, DryRun: dry}
		if dry {
			want.Orphaned = []string{"orphan", "broken"}
			require.NoError(t, err)
			assert.Empty(t, k.calls, "a dry run changes nothing")
		} else {
			require.ErrorContains(t, err, "refused")
			assert.Equal(t, []string{"destroy old", "destroy orphan", "stop idle", "destroy broken"}, k.calls)
		}
		assert.Equal(t, want, report)
	}
	names, err := paddock.Leased(context.Background(), &keeper{Adapter: fake.New(), facts: func() []paddock.SandboxFacts { return all }}, "gone")
	require.NoError(t, err)
	assert.Equal(t, []string{"orphan"}, names)
}

func TestReapWithoutAnIdleStopper(t *testing.T) {
	t.Parallel()
	now := time.Now()
	k := &keeper{Adapter: fake.New(), facts: func() []paddock.SandboxFacts {
		return []paddock.SandboxFacts{{Name: "idle", Created: now.Add(-2 * time.Hour), Idle: time.Hour, Running: true}}
	}}
	report, err := paddock.Reap(context.Background(), k, paddock.ReapOpts{})
	require.NoError(t, err)
	assert.Empty(t, report.Stopped, "no stopper: the provider parks idle sandboxes itself")
	assert.Empty(t, k.calls)
}

// A reap judges a sandbox at the time its reading began: a lease that was
// live when read is never orphaned because reading the other sandboxes
// took longer than what was left of it.
func TestReapJudgesWhenTheReadingBegan(t *testing.T) {
	t.Parallel()
	k := &keeper{Adapter: fake.New(), facts: func() []paddock.SandboxFacts {
		live := paddock.SandboxFacts{Name: "live", Created: time.Now().Add(-time.Minute),
			Lease: paddock.Lease{Owner: "other", Until: time.Now().Add(time.Millisecond)}}
		time.Sleep(20 * time.Millisecond) // the rest of a slow listing, past the lease's end
		return []paddock.SandboxFacts{live}
	}}
	report, err := paddock.Reap(t.Context(), k, paddock.ReapOpts{Owner: "me"})
	require.NoError(t, err)
	assert.Empty(t, report.Orphaned)
	assert.Empty(t, k.calls)
}
