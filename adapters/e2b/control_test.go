package e2b_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
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
	a := build(t, e2b.Config{BaseURL: srv.URL()})
	_, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.ErrorIs(t, err, paddock.ErrDenied)
	assert.Empty(t, srv.Requests(), "nothing is sent without a key")

	key := srv.Key()
	cfg := e2b.Config{APIKey: paddock.NewSecret(key), BaseURL: srv.URL()}
	a = build(t, cfg)
	for _, s := range []string{fmt.Sprintf("%v %+v %#v %s", a, a, a, a), fmt.Sprintf("%v %+v %#v", cfg, cfg, cfg)} {
		assert.NotContains(t, s, key)
	}
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	assert.NotContains(t, string(b), key)

	// A wrong key is refused, and neither it nor the right one shows in
	// the error or in a debug log of the call.
	wrong := captured.Secret("e2b_wrong_" + key[4:20])
	w := build(t, e2b.Config{APIKey: paddock.NewSecret(wrong), BaseURL: srv.URL(), EnvdURL: srv.URL(), Logger: testLogger()})
	_, err = w.Create(ctx, "box", paddock.CreateOpts{})
	captured.Err(err)
	require.ErrorIs(t, err, paddock.ErrDenied)
	reqs := srv.Requests()
	require.Equal(t, wrong, reqs[len(reqs)-1].Header.Get("X-API-Key"), "the key travels in its header only")
	assert.Zero(t, captured.Leaks(), "so far, no key in any log line or error")
	assert.Positive(t, captured.Lines(), "the adapters did log")
}
