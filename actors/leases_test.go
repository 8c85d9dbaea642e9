package actors_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/fake"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leasingFake is the fake with leases: it records the lease of each
// create, every renewal and reclaim, and answers its facts from fixed
// lists.
type leasingFake struct {
	*fake.Adapter
	mu         sync.Mutex
	created    map[string]paddock.Lease
	renewals   [][]string
	renewed    map[string]paddock.Lease
	leased     map[string][]string // owner -> names
	reapable   []paddock.SandboxFacts
	reclaimed  []string
	stopped    atomic.Bool // set once the runtime shut down: no call may follow
	lateCalls  atomic.Int32
	failLeased atomic.Int32 // how many Leased calls fail before one answers
	limitRenew atomic.Bool  // renewals answer rate_limited (an hour's hint)
	creates    atomic.Int32
}

func newLeasingFake() *leasingFake {
	return &leasingFake{Adapter: fake.New(), created: map[string]paddock.Lease{}, renewed: map[string]paddock.Lease{}, leased: map[string][]string{}}
}

func (f *leasingFake) Create(ctx context.Context, name string, opts paddock.CreateOpts) (paddock.Handle, error) {
	f.creates.Add(1)
	f.mu.Lock()
	f.created[name] = opts.Lease
	f.mu.Unlock()
	return f.Adapter.Create(ctx, name, paddock.CreateOpts{Params: opts.Params})
}

func (f *leasingFake) RenewLeases(_ context.Context, names []string, lease paddock.Lease) error {
	if f.stopped.Load() {
		f.lateCalls.Add(1)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.renewals = append(f.renewals, slices.Clone(names))
	if f.limitRenew.Load() {
		hour := time.Hour
		return &paddock.RateLimitedError{RetryAfter: &hour}
	}
	for _, n := range names {
		f.renewed[n] = lease
	}
	return nil
}

// SandboxFacts answers a sandbox per name of f.leased, held by its owner
// with no end, and f.reapable.
func (f *leasingFake) SandboxFacts(context.Context) ([]paddock.SandboxFacts, error) {
	if f.failLeased.Add(-1) >= 0 {
		return nil, paddock.ErrUnavailable
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var all []paddock.SandboxFacts
	for owner, names := range f.leased {
		for _, n := range names {
			all = append(all, paddock.SandboxFacts{Name: n, Lease: paddock.Lease{Owner: owner}})
		}
	}
	return append(all, f.reapable...), nil
}

func (f *leasingFake) Reclaim(_ context.Context, sf paddock.SandboxFacts) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reclaimed = append(f.reclaimed, sf.Name)
	return nil
}

func (f *leasingFake) renewedSince(start int) (calls [][]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.renewals[start:])
}

func startLeasing(t *testing.T, f *leasingFake, cfg actors.Config) *actors.Runtime {
	t.Helper()
	cfg.Adapters = paddock.Registry{paddock.ProviderFake: f}
	cfg.ReapInterval = -1
	rt, err := actors.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
		f.stopped.Store(true)
	})
	return rt
}

// A create through the runtime records its identity and a lease from now;
// the runtime holds the sandbox until it is destroyed.
func TestCreateRecordsTheLease(t *testing.T) {
	t.Parallel()
	f := newLeasingFake()
	rt := startLeasing(t, f, actors.Config{Identity: "orchestrator-1", Lease: time.Hour})
	before := time.Now()
	h, err := rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	f.mu.Lock()
	lease := f.created["box"]
	f.mu.Unlock()
	assert.Equal(t, "orchestrator-1", lease.Owner)
	assert.WithinRange(t, lease.Until, before.Add(time.Hour), time.Now().Add(time.Hour))
	assert.Equal(t, "orchestrator-1", rt.Identity())
	assert.Equal(t, []string{"box"}, rt.Held(paddock.ProviderFake))
	require.NoError(t, rt.Adapter(h.Provider).Destroy(ctx, h))
	assert.Empty(t, rt.Held(paddock.ProviderFake), "a destroyed sandbox is let go")
}

// Renewals cover every held sandbox each round, in batches of at most 250,
// and end with the runtime.
func TestRenewalsAreBatchedAndStopAtShutdown(t *testing.T) {
	t.Parallel()
	f := newLeasingFake()
	rt := startLeasing(t, f, actors.Config{Identity: "renewer", Lease: 300 * time.Millisecond})
	var names []string
	for i := range 300 {
		n := fmt.Sprintf("box-%03d", i)
		names = append(names, n)
		_, err := rt.Adapter(paddock.ProviderFake).Create(ctx, n, paddock.CreateOpts{})
		require.NoError(t, err)
	}
	f.mu.Lock()
	start := len(f.renewals)
	f.mu.Unlock()
	var round []string
	require.Eventually(t, func() bool {
		calls := f.renewedSince(start)
		round = nil
		for _, c := range calls {
			require.LessOrEqual(t, len(c), 250, "a renewal carries at most 250 sandboxes")
			round = append(round, c...)
		}
		return len(round) >= len(names)
	}, time.Minute, 10*time.Millisecond)
	slices.Sort(round)
	assert.Equal(t, names, slices.Compact(round)[:len(names)], "one round renews every held sandbox")
	f.mu.Lock()
	lease := f.renewed[names[0]]
	f.mu.Unlock()
	assert.Equal(t, "renewer", lease.Owner)
	assert.WithinDuration(t, time.Now().Add(300*time.Millisecond), lease.Until, 5*time.Second)

	sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, rt.Shutdown(sctx))
	f.stopped.Store(true)
	// Shutdown waited for the renewal goroutine: nothing can renew now.
	assert.Zero(t, f.lateCalls.Load())
}

// A runtime started with an identity adopts the sandboxes leased to it and
// renews them; with leases off it records and renews nothing.
func TestAdoptionAndLeasesOff(t *testing.T) {
	t.Parallel()
	f := newLeasingFake()
	f.leased["heir"] = []string{"left-1", "left-2"}
	rt := startLeasing(t, f, actors.Config{Identity: "heir", Lease: 300 * time.Millisecond})
	require.Eventually(t, func() bool { return slices.Equal(rt.Held(paddock.ProviderFake), []string{"left-1", "left-2"}) },
		time.Minute, 10*time.Millisecond, "adopted")
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.renewed["left-1"].Owner == "heir" && f.renewed["left-2"].Owner == "heir"
	}, time.Minute, 10*time.Millisecond, "renewed as its own")

	retried := newLeasingFake()
	retried.leased["again"] = []string{"kept"}
	retried.failLeased.Store(2)
	rt3 := startLeasing(t, retried, actors.Config{Identity: "again", Lease: 300 * time.Millisecond})
	require.Eventually(t, func() bool { return slices.Equal(rt3.Held(paddock.ProviderFake), []string{"kept"}) },
		time.Minute, 10*time.Millisecond, "a failed adoption is tried again next round")

	off := newLeasingFake()
	off.leased["nobody"] = []string{"x"}
	rt2 := startLeasing(t, off, actors.Config{Identity: "nobody", Lease: -1})
	_, err := rt2.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	off.mu.Lock()
	assert.True(t, off.created["box"].IsZero(), "no lease recorded")
	off.mu.Unlock()
	assert.Equal(t, []string{"box"}, rt2.Held(paddock.ProviderFake), "no adoption without leases")
}

// Reap runs as the runtime's identity (what it holds is never an orphan,
// whatever owner the caller names) and passes a dry run through.
func TestReapRunsAsTheRuntime(t *testing.T) {
	t.Parallel()
	f := newLeasingFake()
	past := time.Now().Add(-time.Hour)
	f.reapable = []paddock.SandboxFacts{
		{Name: "gone", Created: past, Lease: paddock.Lease{Owner: "crashed", Until: past}},
		{Name: "mine", Created: past, Lease: paddock.Lease{Owner: "reaper", Until: past}},
	}
	rt := startLeasing(t, f, actors.Config{Identity: "reaper"})
	reports, err := rt.Reap(ctx, paddock.ReapOpts{DryRun: true, Owner: "someone else"})
	require.NoError(t, err)
	assert.Equal(t, paddock.ReapReport{Orphaned: []string{"gone"}, DryRun: true}, reports[paddock.ProviderFake])
	f.mu.Lock()
	assert.Empty(t, f.reclaimed, "a dry run changes nothing")
	f.mu.Unlock()
	_, err = rt.Reap(ctx, paddock.ReapOpts{})
	require.NoError(t, err)
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Equal(t, []string{"gone"}, f.reclaimed)
}

// A renewal the provider answers rate_limited backs the whole provider
// off, as a caller's call would: the next create is refused without
// reaching the provider.
func TestARateLimitedRenewalBacksTheProviderOff(t *testing.T) {
	t.Parallel()
	f := newLeasingFake()
	rt := startLeasing(t, f, actors.Config{Identity: "limited", Lease: 300 * time.Millisecond,
		Admission: map[paddock.Provider]actors.Admission{paddock.ProviderFake: {}}})
	_, err := rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	f.limitRenew.Store(true)
	f.mu.Lock()
	start := len(f.renewals)
	f.mu.Unlock()
	require.Eventually(t, func() bool { return len(f.renewedSince(start)) > 0 }, time.Minute, 10*time.Millisecond, "a renewal was answered 429")
	require.Eventually(t, func() bool {
		_, err := rt.Adapter(paddock.ProviderFake).Create(ctx, "next", paddock.CreateOpts{})
		return errors.Is(err, paddock.ErrRateLimited)
	}, time.Minute, 10*time.Millisecond)
	assert.Equal(t, int32(1), f.creates.Load(), "the refused create never reached the provider")
}
