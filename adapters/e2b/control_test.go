package e2b_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/conformance"
	"github.com/paddockhq/paddock/internal/clocktest"
	"github.com/paddockhq/paddock/messages"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newAdapter(t testing.TB, srv *e2btest.Server, edit ...func(*e2b.Config)) *e2b.Adapter {
	t.Helper()
	cfg := e2b.Config{APIKey: paddock.NewSecret(captured.Secret(srv.Key())), BaseURL: srv.URL(), EnvdURL: srv.URL(), Logger: testLogger()}
	for _, e := range edit {
		e(&cfg)
	}
	return build(t, cfg)
}

// bodyOf decodes the JSON body of the i-th request of route.
func bodyOf(t *testing.T, srv *e2btest.Server, route string, i int) map[string]any {
	t.Helper()
	n := 0
	for _, r := range srv.Requests() {
		if r.Route != route {
			continue
		}
		if n == i {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.Body), &m), r.Body)
			return m
		}
		n++
	}
	require.Failf(t, "no such request", "%s #%d", route, i)
	return nil
}

func TestCreateMakesANamedSandboxAndAdoptsIt(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	assert.Equal(t, paddock.Handle{Provider: paddock.ProviderE2B, Name: "box"}, h)
	body := bodyOf(t, srv, "POST /sandboxes", 0)
	assert.Equal(t, "base", body["templateID"])
	assert.Equal(t, float64(1800), body["timeout"], "the default TTL, 30 minutes")
	assert.Equal(t, true, body["autoPause"], "a TTL that runs out pauses, never kills")
	assert.Equal(t, map[string]any{"paddock_name": "box", "paddock": "1"}, body["metadata"])

	// The lookup asks for both states and the name's metadata.
	list := srv.Requests()[0]
	require.Equal(t, "GET /v2/sandboxes", list.Route)
	q, err := url.ParseQuery(list.Query)
	require.NoError(t, err)
	assert.Equal(t, "running,paused", q.Get("state"))
	assert.Equal(t, "paddock_name=box", q.Get("metadata"))
	assert.Equal(t, srv.Key(), list.Header.Get("X-API-Key"))

	_, err = a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	assert.Equal(t, 1, srv.Count("POST /sandboxes"), "the second create adopts")
	require.Len(t, srv.Sandboxes(), 1)

	// A paused sandbox is adopted too, not duplicated.
	require.NoError(t, a.Suspend(ctx, h))
	_, err = a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	assert.Equal(t, 1, srv.Count("POST /sandboxes"))
	assert.Equal(t, "paused", srv.State(srv.Sandboxes()[0]), "adopting does not resume")
}

// Names with characters that need escaping survive the metadata filter's
// double encoding.
func TestNamesNeedingEscapesAreFound(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	for _, name := range []string{"a&b=c", "sp ace", "pct%41", "uni-ç"} {
		_, err := a.Create(ctx, name, paddock.CreateOpts{})
		require.NoError(t, err, name)
		info, err := a.Get(ctx, a.BuildHandle(name))
		require.NoError(t, err, name)
		assert.Equal(t, name, info.Name)
	}
	assert.Len(t, srv.Sandboxes(), 4)
	names, err := a.ListAllNames(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a&b=c", "sp ace", "pct%41", "uni-ç"}, names)
}

// Two creates of one name racing may both create; every caller then
// converges on one sandbox (the newest, first in the listing).
func TestRacingCreatesConverge(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := a.Create(ctx, "raced", paddock.CreateOpts{})
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	ids := map[string]bool{}
	for range 8 {
		info, err := a.Get(ctx, a.BuildHandle("raced"))
		require.NoError(t, err)
		ids[info.ID] = true
	}
	assert.Len(t, ids, 1, "every lookup names the same sandbox (of %d made)", len(srv.Sandboxes()))
	require.NoError(t, a.Destroy(ctx, a.BuildHandle("raced")))
	assert.Empty(t, srv.Sandboxes(), "destroy removes every sandbox of the name")
}

func TestGetMapsStates(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	info, err := a.Get(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, paddock.StatusRunning, info.Status)
	assert.Equal(t, "base", info.Image)
	assert.Equal(t, srv.Sandboxes()[0], info.ID)
	assert.Equal(t, srv.Now(), info.CreatedAt)
	require.NoError(t, a.Suspend(ctx, h))
	info, err = a.Get(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, paddock.StatusSuspended, info.Status)

	srv.Fail("GET /v2/sandboxes", e2btest.Body(http.StatusOK, `[{"sandboxID":"iabc","templateID":"base","state":"starting","metadata":{"paddock_name":"box"}}]`))
	info, err = a.Get(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, paddock.StatusUnknown, info.Status)

	_, err = a.Get(ctx, a.BuildHandle("absent"))
	require.ErrorIs(t, err, paddock.ErrNotFound)
}

func TestDestroyIsDefinitive(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	require.NoError(t, a.Suspend(ctx, h))
	require.NoError(t, a.Destroy(ctx, h), "a paused sandbox is destroyed too")
	_, err = a.Get(ctx, h)
	require.ErrorIs(t, err, paddock.ErrNotFound)
	require.NoError(t, a.Destroy(ctx, h), "an absent sandbox is destroyed already")

	// A sandbox that vanishes between the lookup and the kill (its DELETE
	// answers 404) is gone: the next lookup finds nothing.
	_, err = a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	srv.Fail("GET /v2/sandboxes", e2btest.Fault{})                   // the first lookup is real
	srv.Fail("GET /v2/sandboxes", e2btest.Body(http.StatusOK, `[]`)) // the next finds nothing
	srv.Fail("DELETE /sandboxes/{id}", e2btest.Status(http.StatusNotFound))
	before := srv.Count("DELETE /sandboxes/{id}")
	require.NoError(t, a.Destroy(ctx, h))
	assert.Equal(t, before+1, srv.Count("DELETE /sandboxes/{id}"))
}

func TestSuspendAndResume(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	id := srv.Sandboxes()[0]
	require.NoError(t, a.Suspend(ctx, h))
	assert.Equal(t, "paused", srv.State(id))
	require.NoError(t, a.Suspend(ctx, h))
	assert.Equal(t, 1, srv.Count("POST /sandboxes/{id}/pause"), "an already paused sandbox is not paused again")

	h2, err := a.Resume(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, h, h2)
	assert.Equal(t, "running", srv.State(id))
	assert.Equal(t, float64(1800), bodyOf(t, srv, "POST /sandboxes/{id}/connect", 0)["timeout"])
	_, err = a.Resume(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, 1, srv.Count("POST /sandboxes/{id}/connect"), "a running sandbox needs no connect")

	// A pause that loses a race (409: paused meanwhile) is success.
	srv.Fail("POST /sandboxes/{id}/pause", e2btest.Status(http.StatusConflict))
	require.NoError(t, a.Suspend(ctx, h))

	_, err = a.Resume(ctx, a.BuildHandle("absent"))
	require.ErrorIs(t, err, paddock.ErrNotFound)
	require.ErrorIs(t, a.Suspend(ctx, a.BuildHandle("absent")), paddock.ErrNotFound)
}

func TestNetworkPolicy(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	id := srv.Sandboxes()[0]
	for _, tc := range []struct {
		allow []string
		want  string
	}{
		{nil, `{"allowOut":[],"denyOut":["0.0.0.0/0"]}`},
		{[]string{}, `{"allowOut":[],"denyOut":["0.0.0.0/0"]}`},
		{[]string{"example.com", "*.github.com"}, `{"allowOut":["example.com","*.github.com"],"denyOut":["0.0.0.0/0"]}`},
	} {
		require.NoError(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: tc.allow}))
		assert.JSONEq(t, tc.want, srv.Network(id), "an empty allow list denies all egress and still reaches the provider")
	}
	// A paused sandbox is resumed first (the network route refuses paused ones).
	require.NoError(t, a.Suspend(ctx, h))
	require.NoError(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{"example.com"}}))
	assert.Equal(t, "running", srv.State(id))
	before := len(srv.Requests())
	err = a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{"http://x"}})
	require.ErrorIs(t, err, paddock.ErrInvalid)
	assert.Len(t, srv.Requests(), before, "an invalid policy sends nothing")
}

// Every control-plane failure maps to its taxonomy kind, with the detail
// and status kept, and the private text of the body never leaks.
func TestControlPlaneFailures(t *testing.T) {
	t.Parallel()
	hint := 7 * time.Second
	tests := map[string]struct {
		route string
		fault e2btest.Fault
		call  func(a *e2b.Adapter) error
		check func(t *testing.T, err error)
	}{
		"429 with Retry-After": {"POST /sandboxes", e2btest.RateLimited(7), create, func(t *testing.T, err error) {
			var rl *paddock.RateLimitedError
			require.ErrorAs(t, err, &rl)
			require.NotNil(t, rl.RetryAfter)
			assert.Equal(t, hint, *rl.RetryAfter)
		}},
		"429 at the sandbox limit, no hint": {"POST /sandboxes", e2btest.ConcurrencyLimited(), create, func(t *testing.T, err error) {
			var rl *paddock.RateLimitedError
			require.ErrorAs(t, err, &rl)
			assert.Nil(t, rl.RetryAfter)
		}},
		"401":                                 {"GET /v2/sandboxes", e2btest.Status(http.StatusUnauthorized), create, kindIs(paddock.ErrDenied, 401)},
		"403":                                 {"POST /sandboxes", e2btest.Status(http.StatusForbidden), create, kindIs(paddock.ErrDenied, 403)},
		"404 on create is a missing template": {"POST /sandboxes", e2btest.Status(http.StatusNotFound), create, kindIs(paddock.ErrInvalid, 404)},
		"500 on create":                       {"POST /sandboxes", e2btest.Status(http.StatusInternalServerError), create, kindIs(paddock.ErrUnavailable, 500)},
		"503 on list":                         {"GET /v2/sandboxes", e2btest.Status(http.StatusServiceUnavailable), get, kindIs(paddock.ErrUnavailable, 503)},
		"502 on pause":                        {"POST /sandboxes/{id}/pause", e2btest.Status(http.StatusBadGateway), suspend, kindIs(paddock.ErrUnavailable, 502)},
		"500 on kill":                         {"DELETE /sandboxes/{id}", e2btest.Status(http.StatusInternalServerError), destroy, kindIs(paddock.ErrUnavailable, 500)},
		"504 on network":                      {"PUT /sandboxes/{id}/network", e2btest.Status(http.StatusGatewayTimeout), policy, kindIs(paddock.ErrUnavailable, 504)},
		"409 on network":                      {"PUT /sandboxes/{id}/network", e2btest.Status(http.StatusConflict), policy, kindIs(paddock.ErrInvalid, 409)},
		"418 on create":                       {"POST /sandboxes", e2btest.Status(http.StatusTeapot), create, kindIs(paddock.ErrInvalid, 418)},
		"a reset on create":                   {"POST /sandboxes", e2btest.Reset(), create, kindIs(paddock.ErrUnavailable, 0)},
		"a reset on list":                     {"GET /v2/sandboxes", e2btest.Reset(), get, kindIs(paddock.ErrUnavailable, 0)},
		"a malformed list":                    {"GET /v2/sandboxes", e2btest.Body(http.StatusOK, `{"not":"an array"}`), get, kindIs(paddock.ErrProvider, 0)},
		"a create without an id":              {"POST /sandboxes", e2btest.Body(http.StatusCreated, `{"templateID":"base"}`), create, kindIs(paddock.ErrProvider, 0)},
		"503 on connect (resume)":             {"POST /sandboxes/{id}/connect", e2btest.Status(http.StatusServiceUnavailable), resume, kindIs(paddock.ErrUnavailable, 503)},
		"a list page cut short":               {"GET /v2/sandboxes", e2btest.Fault{Status: http.StatusOK, Body: `[{"sandboxID":"i`, DeclaredLength: 4096}, get, kindIs(paddock.ErrUnavailable, 0)},
		"an oversize list answer": {"GET /v2/sandboxes", e2btest.Body(http.StatusOK, "["+strings.Repeat(" ", 16<<20)+"]"), get, func(t *testing.T, err error) {
			require.ErrorIs(t, err, paddock.ErrProvider)
			assert.Contains(t, err.Error(), "larger than")
		}},
		"a stalled answer past the timeout": {"GET /v2/sandboxes", e2btest.Fault{Delay: time.Minute}, get, func(t *testing.T, err error) {
			require.ErrorIs(t, err, paddock.ErrUnavailable)
			assert.Contains(t, err.Error(), paddock.DetailTimeout)
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := e2btest.NewServer(t)
			a := newAdapter(t, srv)
			if tc.route != "POST /sandboxes" {
				_, err := a.Create(ctx, "box", paddock.CreateOpts{})
				require.NoError(t, err)
			}
			if tc.route == "GET /v2/sandboxes" && strings.Contains(name, "401") {
				_, err := a.Create(ctx, "other", paddock.CreateOpts{})
				require.NoError(t, err)
			}
			sends := 1
			if tc.fault.Reset && strings.HasPrefix(tc.route, "GET ") {
				sends = 2 // Go's transport replays a GET whose reused connection was reset (harmless for a read)
			}
			for range sends {
				srv.Fail(tc.route, tc.fault)
			}
			if tc.fault.Delay > 0 {
				// Only the faulted call runs on a timeout the stall
				// outlasts; the setup above keeps the default, so a slow
				// machine cannot fail it. The timeout leaves a loaded
				// machine room to send the request before it expires.
				a = newAdapter(t, srv, func(c *e2b.Config) { c.Timeout = 5 * time.Second })
			}
			before := srv.Count(tc.route)
			err := tc.call(a)
			captured.Err(err)
			require.Error(t, err)
			tc.check(t, err)
			assert.NotContains(t, err.Error(), srv.Key(), "the key never reaches an error")
			assert.Equal(t, before+sends, srv.Count(tc.route), "a failed call is not retried")
		})
	}
}

func create(a *e2b.Adapter) error {
	_, err := a.Create(ctx, "fresh", paddock.CreateOpts{})
	return err
}
func get(a *e2b.Adapter) error     { _, err := a.Get(ctx, a.BuildHandle("box")); return err }
func suspend(a *e2b.Adapter) error { return a.Suspend(ctx, a.BuildHandle("box")) }

// resume resumes the paused sandbox box (pausing it first, unfaulted).
func resume(a *e2b.Adapter) error {
	if err := a.Suspend(ctx, a.BuildHandle("box")); err != nil {
		return err
	}
	_, err := a.Resume(ctx, a.BuildHandle("box"))
	return err
}
func destroy(a *e2b.Adapter) error { return a.Destroy(ctx, a.BuildHandle("box")) }
func policy(a *e2b.Adapter) error {
	return a.ApplyNetworkPolicy(ctx, a.BuildHandle("box"), paddock.NetworkPolicy{})
}

// kindIs checks the taxonomy kind and the HTTP status an error keeps.
func kindIs(kind error, status int) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		require.ErrorIs(t, err, kind)
		if status == 0 {
			return
		}
		var (
			u *paddock.UnavailableError
			d *paddock.DeniedError
			i *paddock.InvalidError
		)
		switch {
		case errors.As(err, &u):
			assert.Equal(t, status, u.Status)
		case errors.As(err, &d):
			assert.Equal(t, status, d.Status)
		case errors.As(err, &i):
			assert.Equal(t, status, i.Status)
		}
	}
}

func TestListAllNamesPagesAndRefusesPartialViews(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	var want []string
	for i := range 230 {
		name := fmt.Sprintf("s%03d", i)
		want = append(want, name)
		_, err := a.Create(ctx, name, paddock.CreateOpts{})
		require.NoError(t, err)
	}
	before := srv.Count("GET /v2/sandboxes")
	names, err := a.ListAllNames(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, want, names)
	assert.Equal(t, before+3, srv.Count("GET /v2/sandboxes"), "three pages of 100")

	// A listing that never ends is refused after 40 pages, not cut short.
	for range 40 {
		srv.Fail("GET /v2/sandboxes", e2btest.Fault{Status: http.StatusOK, Body: `[]`, Header: http.Header{"X-Next-Token": {"more"}}})
	}
	_, err = a.ListAllNames(ctx)
	require.ErrorIs(t, err, paddock.ErrTruncated)
}

func TestAKeyIsNeededAndNeverShown(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	adaptertest.NeedsCredential(t, build(t, e2b.Config{BaseURL: srv.URL()}), srv)

	key := srv.Key()
	cfg := e2b.Config{APIKey: paddock.NewSecret(key), BaseURL: srv.URL()}
	a := build(t, cfg)
	adaptertest.Hidden(t, key, a, cfg)

	// A wrong key is refused, and neither it nor the right one shows in
	// the error or in a debug log of the call.
	wrong := captured.Secret("e2b_wrong_" + key[4:20])
	w := build(t, e2b.Config{APIKey: paddock.NewSecret(wrong), BaseURL: srv.URL(), EnvdURL: srv.URL(), Logger: testLogger()})
	_, err := w.Create(ctx, "box", paddock.CreateOpts{})
	captured.Err(err)
	require.ErrorIs(t, err, paddock.ErrDenied)
	reqs := srv.Requests()
	require.Equal(t, wrong, reqs[len(reqs)-1].Header.Get("X-API-Key"), "the key travels in its header only")
	assert.Zero(t, captured.Leaks(), "so far, no key in any log line or error")
	assert.Positive(t, captured.Lines(), "the adapters did log")
}

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

const timeoutRoute = "POST /sandboxes/{id}/timeout"

// A heartbeat sets the TTL from now; a paused sandbox is left alone (no
// call); a refused heartbeat is the provider's error.
func TestHeartbeat(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv, func(c *e2b.Config) { c.TTL = 12 * time.Minute })
	assert.Equal(t, 2*time.Minute, a.HeartbeatInterval(), "five heartbeats fit in a TTL")
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	id := srv.Sandboxes()[0]
	assert.Equal(t, srv.Now().Add(12*time.Minute), srv.EndAt(id))
	srv.Advance(11 * time.Minute)
	require.NoError(t, a.Heartbeat(ctx, h))
	assert.Equal(t, srv.Now().Add(12*time.Minute), srv.EndAt(id), "the TTL runs from the heartbeat")
	assert.JSONEq(t, `{"timeout":720}`, string(srv.Requests()[len(srv.Requests())-1].Body))
	srv.Advance(11 * time.Minute)
	assert.Equal(t, "running", srv.State(id), "kept alive past its first TTL")
	srv.Advance(2 * time.Minute)
	assert.Equal(t, "paused", srv.State(id), "without heartbeats the TTL pauses it")

	before := srv.Count(timeoutRoute)
	require.NoError(t, a.Heartbeat(ctx, h))
	assert.Equal(t, before, srv.Count(timeoutRoute), "a paused sandbox gets no heartbeat")
	assert.Equal(t, "paused", srv.State(id))

	_, err = a.Resume(ctx, h)
	require.NoError(t, err)
	srv.Fail(timeoutRoute, e2btest.Status(http.StatusServiceUnavailable))
	require.ErrorIs(t, a.Heartbeat(ctx, h), paddock.ErrUnavailable)
	require.ErrorIs(t, a.Heartbeat(ctx, a.BuildHandle("absent")), paddock.ErrNotFound)
}

// Through the runtime, a sandbox running a command is kept alive across
// many TTLs by heartbeats on the runtime's clock (a manual one here, moved
// with the server's); once the command ends and nothing uses the sandbox,
// the heartbeats stop and the TTL pauses it.
func TestTheRuntimeKeepsABusySandboxAlive(t *testing.T) {
	t.Parallel()
	const ttl = 6 * time.Minute
	srv := e2btest.NewServer(t)
	clock := clocktest.Frozen()
	a := newAdapter(t, srv, func(c *e2b.Config) { c.TTL = ttl })
	every := a.HeartbeatInterval()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderE2B: a}, Clock: clock, Logger: zerolog.New(zerolog.NewTestWriter(t))})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
	})
	h, err := rt.Adapter(paddock.ProviderE2B).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	id := srv.Sandboxes()[0]
	s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.NewCmd("cat"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)

	// pass moves the server's clock one interval and the runtime's until
	// the due heartbeat lands (a tick that finds the previous heartbeat
	// still in flight rightly skips, so one more may be needed); idle, it
	// moves both once.
	pass := func(wantBeat bool) {
		t.Helper()
		srv.Advance(every)
		before := srv.Count(timeoutRoute)
		require.Eventually(t, func() bool {
			if wantBeat && srv.Count(timeoutRoute) > before {
				return true
			}
			if clock.Pending() == 1 {
				clock.Tick(every)
				return !wantBeat
			}
			return false
		}, time.Minute, time.Millisecond) // a bound for a starved machine: it returns as soon as the beat lands
	}
	for range 3 * ttl / every { // three TTLs with a command running
		pass(true)
		require.Equal(t, "running", srv.State(id), "the busy sandbox never expires")
	}
	require.NoError(t, s.WriteStdin(ctx, []byte("alive\n")))
	require.NoError(t, s.CloseStdin(ctx))
	var out []byte
	for f := range s.(*actors.FrameStream).C() {
		if d, ok := stdoutOf(f); ok {
			out = append(out, d...)
		}
	}
	assert.Equal(t, "alive\n", string(out), "the command outlived three TTLs")

	// Idle now: the heartbeats stop within a few intervals and the TTL
	// pauses the sandbox.
	for i := 0; srv.State(id) != "paused"; i++ {
		require.Less(t, i, 3*int(ttl/every), "an idle sandbox lives out its TTL")
		pass(false)
	}
}

// stdoutOf is the data of a stdout frame.
func stdoutOf(f messages.Frame) ([]byte, bool) {
	out, ok := f.(*messages.Stdout)
	return out.GetData(), ok
}

// The service RunLeases' child processes reach.
const (
	leaseURLEnv = "PADDOCK_E2B_LEASE_URL"
	leaseKeyEnv = "PADDOCK_E2B_LEASE_KEY"
)

func TestLeases(t *testing.T) {
	t.Parallel()
	url, key := os.Getenv(leaseURLEnv), os.Getenv(leaseKeyEnv)
	if url == "" {
		srv := e2btest.NewServer(t)
		url, key = srv.URL(), srv.Key()
	}
	conformance.RunLeases(t, leaseSetup(t, url, url, key))
}

// TestLiveLeases runs RunLeases against the real E2B service with the key
// in E2B_API_KEY (E2B_BASE_URL optional).
func TestLiveLeases(t *testing.T) {
	t.Parallel()
	key := captured.Secret(conformance.LiveCredential(t, "E2B_API_KEY", "E2B_BASE_URL"))
	url := cmp.Or(os.Getenv("E2B_BASE_URL"), e2b.DefaultBaseURL)
	conformance.RunLeases(t, leaseSetup(t, url, "", key))
}

// leaseSetup is RunLeases on the E2B API at url (envd at envdURL, "" =
// each sandbox's own host) with key.
func leaseSetup(t *testing.T, url, envdURL, key string) conformance.LeaseSetup {
	call := adaptertest.Caller(t, url, "X-API-Key", key)
	return conformance.LeaseSetup{
		ChildEnv: []string{leaseURLEnv + "=" + url, leaseKeyEnv + "=" + key},
		Adapter: func(t *testing.T) paddock.Adapter {
			a, err := e2b.New(e2b.Config{APIKey: paddock.NewSecret(key), BaseURL: url, EnvdURL: envdURL, Logger: testLogger(), Timeout: 2 * time.Minute})
			require.NoError(t, err)
			return a
		},
		Foreign: func(t *testing.T, name string) func() bool {
			status, body := call(http.MethodPost, "/sandboxes", `{"templateID":"base","timeout":600,"metadata":{"team":"ops"}}`)
			require.Equal(t, http.StatusCreated, status, string(body))
			var got struct {
				SandboxID string `json:"sandboxID"`
			}
			require.NoError(t, json.Unmarshal(body, &got))
			t.Cleanup(func() { call(http.MethodDelete, "/sandboxes/"+got.SandboxID, "") })
			return func() bool {
				status, _ := call(http.MethodGet, "/sandboxes/"+got.SandboxID, "")
				return status == http.StatusOK
			}
		},
	}
}

// A paused sandbox cannot carry a renewed lease, so it is never an orphan;
// its maximum age still bounds it. A running one whose lease lapsed is.
func TestReapOnPausedSandboxes(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	// The maximum age must outlast the creates and the first reap: CI's
	// loaded machine once took over 2 s for them.
	a := newAdapter(t, srv, func(c *e2b.Config) { c.MaxAge = 10 * time.Second })
	lapsed := paddock.Lease{Owner: "gone", Until: time.Now().Add(-time.Minute)}
	created := time.Now()
	paused, err := a.Create(ctx, "paused-orphan", paddock.CreateOpts{Lease: lapsed})
	require.NoError(t, err)
	require.NoError(t, a.Suspend(ctx, paused))
	_, err = a.Create(ctx, "running-orphan", paddock.CreateOpts{Lease: lapsed})
	require.NoError(t, err)

	report, err := paddock.Reap(ctx, a, paddock.ReapOpts{DryRun: true})
	require.NoError(t, err)
	if time.Since(created) < 10*time.Second { // past it, both are rightly destroyed instead
		assert.Equal(t, []string{"running-orphan"}, report.Orphaned, "the running one's lease lapsed; the paused one's cannot be read")
		assert.Empty(t, report.Destroyed)
	}
	require.Eventually(t, func() bool {
		report, err = paddock.Reap(ctx, a, paddock.ReapOpts{DryRun: true})
		return err == nil && len(report.Destroyed) == 2
	}, time.Minute, 50*time.Millisecond, "both pass their maximum age")
	assert.ElementsMatch(t, []string{"paused-orphan", "running-orphan"}, report.Destroyed)
	report, err = paddock.Reap(ctx, a, paddock.ReapOpts{})
	require.NoError(t, err)
	assert.Len(t, report.Destroyed, 2)
	_, err = a.Get(ctx, paused)
	require.ErrorIs(t, err, paddock.ErrNotFound)
}

// A lease file that cannot be read this time is no evidence: the sandbox
// is not an orphan on a guess, whatever its creation-time lease says.
func TestReapNeverGuessesAnUnreadableLease(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	lapsed := paddock.Lease{Owner: "gone", Until: time.Now().Add(-time.Minute)}
	_, err := a.Create(ctx, "unreadable", paddock.CreateOpts{Lease: lapsed})
	require.NoError(t, err)
	srv.Fail("ENVD /files", e2btest.Status(http.StatusBadGateway))
	report, err := paddock.Reap(ctx, a, paddock.ReapOpts{})
	require.NoError(t, err)
	assert.Empty(t, report.Orphaned, "envd answered 502: the lease is unknown")
	report, err = paddock.Reap(ctx, a, paddock.ReapOpts{DryRun: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"unreadable"}, report.Orphaned, "read (absent: never renewed), the creation-time lease lapsed")
}
