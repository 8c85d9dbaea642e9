package actors_test

import (
	"context"
	"fmt"
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
