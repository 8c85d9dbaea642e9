package e2b_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startAdmitted runs the E2B adapter on srv under a runtime with limits,
// and without leases: its adoption and renewals are calls of its own that
// would take the faults these tests queue for their callers.
func startAdmitted(t *testing.T, srv *e2btest.Server, limits actors.Admission) *actors.Runtime {
	t.Helper()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderE2B: newAdapter(t, srv)}, ReapInterval: -1, Lease: -1,
		Admission: map[paddock.Provider]actors.Admission{paddock.ProviderE2B: limits}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(context.Background())) })
	return rt
}

// A limit of 3 concurrent creates, measured at the server: 20 parallel
// creates never have more than 3 creation requests in flight there, and
// all succeed. The first three are held at the server until all three
// arrived (the limit is reached, whatever the machine's speed); the rest
// are answered after a short stall.
func TestAdmissionLimitsCreatesAtTheServer(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	rt := startAdmitted(t, srv, actors.Admission{MaxCreates: 3, Wait: 2 * time.Minute})
	release := make(chan struct{})
	for i := range 20 {
		f := e2btest.Fault{Delay: 100 * time.Millisecond} // then answered normally
		if i < 3 {
			f = e2btest.Fault{Hold: release}
		}
		srv.Fail("POST /sandboxes", f)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := rt.Adapter(paddock.ProviderE2B).Create(context.Background(), fmt.Sprintf("box-%d", i), paddock.CreateOpts{})
			errs <- err
		}()
	}
	require.Eventually(t, func() bool { return srv.InFlight("POST /sandboxes") == 3 }, time.Minute, time.Millisecond)
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, 20, srv.Count("POST /sandboxes"))
	assert.Equal(t, 3, srv.MostInFlight("POST /sandboxes"), "never more than 3 creation requests at the server, and the limit was used")
}

// A burst of the provider's 429s slows every caller of it: after E2B
// answered 429 with Retry-After 1, other calls are refused rate_limited
// without reaching the server until the second is over, then reach it.
func TestAdmissionBacksOffAfterTheProvidersRateLimit(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	rt := startAdmitted(t, srv, actors.Admission{})
	h, err := rt.Adapter(paddock.ProviderE2B).Create(context.Background(), "box", paddock.CreateOpts{})
	require.NoError(t, err)
	srv.Fail("GET /v2/sandboxes", e2btest.RateLimited(1))
	_, err = rt.Adapter(h.Provider).Get(context.Background(), h)
	require.ErrorIs(t, err, paddock.ErrRateLimited, "E2B's own 429")
	limitedAt := time.Now()
	before := srv.Count("GET /v2/sandboxes")
	for i := range 5 {
		if time.Since(limitedAt) > 800*time.Millisecond {
			break // a slow machine: the back-off may be over before the next call
		}
		_, err := rt.Adapter(h.Provider).Get(context.Background(), h)
		require.ErrorIs(t, err, paddock.ErrRateLimited, "caller %d during the back-off", i)
	}
	assert.Equal(t, before, srv.Count("GET /v2/sandboxes"), "no call reached E2B during the back-off")
	require.Eventually(t, func() bool {
		_, err := rt.Adapter(h.Provider).Get(context.Background(), h)
		return err == nil
	}, time.Minute, 50*time.Millisecond)
	assert.Greater(t, srv.Count("GET /v2/sandboxes"), before, "after the hint the calls reach E2B again")
}
