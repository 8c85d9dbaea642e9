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
	"github.com/paddockhq/paddock/internal/clocktest"
	"github.com/paddockhq/paddock/messages"
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

// slowFake is the fake whose creates take a while, counting the creates
// in flight at the adapter (the most seen) and the calls that reached it;
// gets answer rate_limited while limited is set.
type slowFake struct {
	*fake.Adapter
	delay          time.Duration
	inFlight, most atomic.Int64
	creates, gets  atomic.Int64
	limited        atomic.Bool
	retryAfter     time.Duration
}

func (f *slowFake) Create(ctx context.Context, name string, opts paddock.CreateOpts) (paddock.Handle, error) {
	f.creates.Add(1)
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for m := f.most.Load(); n > m && !f.most.CompareAndSwap(m, n); m = f.most.Load() {
	}
	time.Sleep(f.delay)
	return f.Adapter.Create(ctx, name, opts)
}

func (f *slowFake) Get(ctx context.Context, h paddock.Handle) (paddock.Info, error) {
	f.gets.Add(1)
	if f.limited.Load() {
		return paddock.Info{}, &paddock.RateLimitedError{RetryAfter: &f.retryAfter}
	}
	return f.Adapter.Get(ctx, h)
}

func startLimited(t *testing.T, f *slowFake, limits actors.Admission) *actors.Runtime {
	t.Helper()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: f}, ReapInterval: -1,
		Admission: map[paddock.Provider]actors.Admission{paddock.ProviderFake: limits}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(context.Background())) })
	return rt
}

// A limit of 3 concurrent creates: 20 parallel creates never have more
// than 3 in flight at the adapter, and all succeed when they may wait.
func TestAdmissionCapsCreatesInFlight(t *testing.T) {
	t.Parallel()
	f := &slowFake{Adapter: fake.New(), delay: 20 * time.Millisecond}
	rt := startLimited(t, f, actors.Admission{MaxCreates: 3, Wait: time.Minute})
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := rt.Adapter(paddock.ProviderFake).Create(context.Background(), fmt.Sprintf("box-%d", i), paddock.CreateOpts{})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.EqualValues(t, 3, f.most.Load(), "never more than 3 in flight, and the limit was used")
	assert.EqualValues(t, 20, f.creates.Load())
}

// Refused creates (no wait allowed) are rate_limited with a hint and never
// reach the adapter; the sandbox limit refuses a new name past it and
// admits it again once one is destroyed.
func TestAdmissionRefusesWithoutReachingTheProvider(t *testing.T) {
	t.Parallel()
	f := &slowFake{Adapter: fake.New(), delay: 50 * time.Millisecond}
	rt := startLimited(t, f, actors.Admission{MaxCreates: 1, MaxSandboxes: 3})
	var wg sync.WaitGroup
	var ok, limited atomic.Int64
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := rt.Adapter(paddock.ProviderFake).Create(context.Background(), fmt.Sprintf("par-%d", i), paddock.CreateOpts{})
			switch {
			case err == nil:
				ok.Add(1)
			case assert.ErrorIs(t, err, paddock.ErrRateLimited):
				var rl *paddock.RateLimitedError
				require.ErrorAs(t, err, &rl)
				assert.NotNil(t, rl.RetryAfter, "a retry hint")
				limited.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.Positive(t, ok.Load())
	assert.Positive(t, limited.Load(), "with one slot and no wait, some of 5 parallel creates are refused")
	assert.Equal(t, ok.Load(), f.creates.Load(), "refused creates never reached the adapter")
	assert.EqualValues(t, 1, f.most.Load())

	// Fill the sandbox limit, one at a time.
	names, err := rt.Adapter(paddock.ProviderFake).ListAllNames(context.Background())
	require.NoError(t, err)
	for i := len(names); i < 3; i++ {
		_, err := rt.Adapter(paddock.ProviderFake).Create(context.Background(), fmt.Sprintf("seq-%d", i), paddock.CreateOpts{})
		require.NoError(t, err)
	}
	names, err = rt.Adapter(paddock.ProviderFake).ListAllNames(context.Background())
	require.NoError(t, err)
	require.Len(t, names, 3)
	_, err = rt.Adapter(paddock.ProviderFake).Create(context.Background(), "one-too-many", paddock.CreateOpts{})
	require.ErrorIs(t, err, paddock.ErrRateLimited)
	_, err = rt.Adapter(paddock.ProviderFake).Create(context.Background(), names[0], paddock.CreateOpts{})
	require.NoError(t, err, "adopting a live sandbox needs no new slot")
	require.NoError(t, rt.Adapter(paddock.ProviderFake).Destroy(context.Background(), rt.Adapter(paddock.ProviderFake).BuildHandle(names[1])))
	_, err = rt.Adapter(paddock.ProviderFake).Create(context.Background(), "one-too-many", paddock.CreateOpts{})
	require.NoError(t, err, "a destroy made room")
}

// A provider's rate_limited answer backs every caller of it off: calls
// that may not wait are refused without reaching it until the hint is
// over, and then they reach it again.
func TestAdmissionBacksTheProviderOffAfterRateLimited(t *testing.T) {
	t.Parallel()
	f := &slowFake{Adapter: fake.New(), retryAfter: 300 * time.Millisecond}
	rt := startLimited(t, f, actors.Admission{})
	h, err := rt.Adapter(paddock.ProviderFake).Create(context.Background(), "box", paddock.CreateOpts{})
	require.NoError(t, err)
	f.limited.Store(true)
	_, err = rt.Adapter(h.Provider).Get(context.Background(), h)
	require.ErrorIs(t, err, paddock.ErrRateLimited, "the provider's own answer")
	f.limited.Store(false)
	throttledAt := time.Now()
	gets := f.gets.Load()
	for i := range 10 { // other callers during the back-off
		if time.Since(throttledAt) >= 200*time.Millisecond {
			break // a slow machine: the back-off may end before the next call
		}
		_, err := rt.Adapter(h.Provider).Get(context.Background(), h)
		require.ErrorIs(t, err, paddock.ErrRateLimited, "call %d during the back-off", i)
	}
	assert.Equal(t, gets, f.gets.Load(), "no call reached the provider during the back-off")
	require.Eventually(t, func() bool {
		_, err := rt.Adapter(h.Provider).Get(context.Background(), h)
		return err == nil
	}, time.Minute, 20*time.Millisecond, "after the hint the provider is called again")
}

func TestAdmissionConfigIsValidated(t *testing.T) {
	t.Parallel()
	for _, a := range []map[paddock.Provider]actors.Admission{
		{"nope": {MaxCreates: 1}},
		{paddock.ProviderFake: {MaxCreates: -1}},
	} {
		_, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: fake.New()}, Admission: a})
		require.ErrorIs(t, err, paddock.ErrInvalid, "%v", a)
	}
}

// beating is a fake whose sandboxes need heartbeats; every third one fails
// and every fifth panics, which must never touch a command.
type beating struct {
	*fake.Adapter
	every time.Duration
	calls atomic.Int32
}

func (b *beating) HeartbeatInterval() time.Duration { return b.every }

func (b *beating) Heartbeat(_ context.Context, h paddock.Handle) error {
	switch n := b.calls.Add(1); {
	case h.Name != "box":
		return errors.New("heartbeat for the wrong sandbox: " + h.Name)
	case n%5 == 0:
		panic("a heartbeat that panics")
	case n%3 == 0:
		return &paddock.UnavailableError{Detail: "heartbeat refused"}
	}
	return nil
}

// The runtime beats while a sandbox has a live command or saw a request
// since the previous tick, and stops once it has neither; a failing or
// panicking heartbeat leaves the command alone.
func TestHeartbeatsFollowUse(t *testing.T) {
	t.Parallel()
	const every = 5 * time.Minute
	clock := clocktest.Frozen()
	b := &beating{Adapter: fake.New(), every: every}
	events := make(chan string, 64)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: b}, Clock: clock})
	require.NoError(t, err)
	actors.ObserveHeartbeats(rt, func(sandbox, event string) {
		assert.Equal(t, "fake/box", sandbox)
		events <- event
	})
	stopped := false
	shutdown := func() {
		if !stopped {
			stopped = true
			sctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			require.NoError(t, rt.Shutdown(sctx))
		}
	}
	t.Cleanup(shutdown)

	next := func() string {
		t.Helper()
		select {
		case e := <-events:
			return e
		case <-time.After(time.Minute):
			require.FailNow(t, "no heartbeat event within 5s")
		}
		return ""
	}
	// tick lets one interval pass once the timer is armed, and answers the
	// tick's decision (waiting for a sent beat to finish).
	sent := 0
	tick := func() string {
		t.Helper()
		require.Eventually(t, func() bool { return clock.Pending() == 1 }, time.Minute, time.Millisecond, "the heartbeat timer re-arms")
		require.Equal(t, []time.Duration{every}, clock.Delays()[len(clock.Delays())-1:], "the timer waits one interval")
		clock.Tick(every)
		e := next()
		if e == "sent" {
			sent++
			require.Equal(t, "done", next())
		}
		return e
	}

	h, err := rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	assert.Equal(t, "sent", tick(), "a request since the last tick keeps the sandbox alive")
	assert.Equal(t, "idle", tick(), "no command and no request: no heartbeat")

	s, err := spawn(rt, ctx, h, paddock.NewCmd("agent", "stay"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	for i := range 6 {
		assert.Equal(t, "sent", tick(), "a live command keeps the sandbox alive (tick %d)", i)
	}
	require.NoError(t, s.WriteStdin(ctx, []byte("still here")))
	f := frame(t, s)
	require.Equal(t, "echo:still here", string(f.(*messages.Stdout).GetData()), "failed and panicking heartbeats left the command alone")
	require.NoError(t, s.CloseStdin(ctx))
	frames := all(t, s)
	require.NotEmpty(t, frames)
	exit, ok := frames[len(frames)-1].(*messages.Exit)
	require.True(t, ok, "the command ends with its exit")
	require.Zero(t, exit.GetCode())

	// The root tells the sandbox the command ended; until that lands a tick
	// may still beat, after it none does.
	deadline := time.Now().Add(5 * time.Second)
	for tick() == "sent" {
		require.True(t, time.Now().Before(deadline), "heartbeats continued after the command ended")
	}
	assert.Equal(t, "idle", tick(), "heartbeats stay stopped")

	shutdown()
	assert.Equal(t, int32(sent), b.calls.Load(), "every heartbeat sent was one call, none after the runtime let go")
	assert.GreaterOrEqual(t, sent, 7)
	assert.Empty(t, events, "nothing beats after the runtime let go (Shutdown waited for the timer)")
}
