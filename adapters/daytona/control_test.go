package daytona_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/daytona"
	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

func newAdapter(t testing.TB, srv *daytonatest.Server, edit ...func(*daytona.Config)) *daytona.Adapter {
	t.Helper()
	cfg := daytona.Config{APIKey: paddock.NewSecret(captured.Secret(srv.Key())), APIURL: srv.APIURL(), Logger: testLogger(),
		StartTimeout: 10 * time.Second}
	for _, e := range edit {
		e(&cfg)
	}
	return build(t, cfg)
}

// lastBody decodes the body of the last request of route.
func lastBody(t *testing.T, srv *daytonatest.Server, route string) map[string]any {
	t.Helper()
	var body map[string]any
	reqs := srv.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Route == route {
			require.NoError(t, json.Unmarshal([]byte(reqs[i].Body), &body))
			return body
		}
	}
	require.FailNow(t, "no request to "+route)
	return nil
}

const (
	createRoute  = "POST /api/sandbox"
	getRoute     = "GET /api/sandbox/{idOrName}"
	listRoute    = "GET /api/sandbox"
	deleteRoute  = "DELETE /api/sandbox/{idOrName}"
	startRoute   = "POST /api/sandbox/{idOrName}/start"
	stopRoute    = "POST /api/sandbox/{idOrName}/stop"
	networkRoute = "POST /api/sandbox/{idOrName}/network-settings"
)

// Create makes a labelled sandbox and waits until it has started; a second
// create of the name adopts it (409, then the probe finds it).
func TestCreateWaitsAndAdopts(t *testing.T) {
	t.Parallel()
	// A transition of seconds: on a loaded machine the first poll can come
	// a second after the create (CI once saw the sandbox started by then).
	srv := daytonatest.NewServer(t, daytonatest.WithTransitions(3*time.Second))
	a := newAdapter(t, srv, func(c *daytona.Config) { c.Snapshot = "paddock-test"; c.AutoStopMinutes = 30 })
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	assert.Equal(t, paddock.Handle{Provider: paddock.ProviderDaytona, Name: "box"}, h)
	assert.Equal(t, "started", srv.State("box"), "create waits for started")
	assert.Greater(t, srv.Count(getRoute), 1, "it polled while the sandbox was creating")
	body := lastBody(t, srv, createRoute)
	assert.Equal(t, "box", body["name"])
	assert.Equal(t, map[string]any{"paddock": "1"}, body["labels"])
	assert.Equal(t, "paddock-test", body["snapshot"])
	assert.Equal(t, float64(30), body["autoStopInterval"])
	assert.Equal(t, float64(daytona.DefaultAutoArchive), body["autoArchiveInterval"])
	reqs := srv.Requests()
	assert.Equal(t, "Bearer "+srv.Key(), reqs[0].Header.Get("Authorization"))
	assert.Empty(t, reqs[0].Header.Get("X-Daytona-Organization-ID"), "no organisation header with an API key")

	creates := srv.Count(createRoute)
	h2, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err, "adopted")
	assert.Equal(t, h, h2)
	assert.Equal(t, creates+1, srv.Count(createRoute), "one create, answered 409, then adopted")
	assert.Equal(t, []string{"box"}, srv.Sandboxes())

	// A duplicate with a bad snapshot answers 400 (Daytona checks the
	// snapshot first): the probe still finds it.
	_, err = a.Create(ctx, "box", paddock.CreateOpts{Params: map[string]string{"snapshot": "nope"}})
	require.NoError(t, err)
	// A bad snapshot for a new name is the create's error.
	_, err = a.Create(ctx, "fresh", paddock.CreateOpts{Params: map[string]string{"snapshot": "nope"}})
	require.ErrorIs(t, err, paddock.ErrInvalid)
	assert.Contains(t, err.Error(), "400")
	_, err = a.Create(ctx, "fresh", paddock.CreateOpts{Params: map[string]string{"colour": "red"}})
	require.ErrorIs(t, err, paddock.ErrInvalid)
	_, err = a.Create(ctx, "a/b", paddock.CreateOpts{})
	require.ErrorIs(t, err, paddock.ErrInvalid)
}

// Create's parameters: the snapshot and the three intervals.
func TestCreateParams(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	a := newAdapter(t, srv)
	_, err := a.Create(ctx, "box", paddock.CreateOpts{Params: map[string]string{
		"snapshot": "paddock-test", "auto_stop_minutes": "5", "auto_archive_minutes": "60", "auto_delete_minutes": "-1"}})
	require.NoError(t, err)
	body := lastBody(t, srv, createRoute)
	assert.Equal(t, "paddock-test", body["snapshot"])
	assert.Equal(t, float64(5), body["autoStopInterval"])
	assert.Equal(t, float64(60), body["autoArchiveInterval"])
	assert.Equal(t, float64(-1), body["autoDeleteInterval"])
	for _, bad := range []map[string]string{{"auto_stop_minutes": "soon"}, {"auto_archive_minutes": "-3"}} {
		_, err := a.Create(ctx, "other", paddock.CreateOpts{Params: bad})
		require.ErrorIs(t, err, paddock.ErrInvalid, "%v", bad)
	}
	_, err = a.Create(ctx, "plain", paddock.CreateOpts{})
	require.NoError(t, err)
	_, ok := lastBody(t, srv, createRoute)["snapshot"]
	assert.False(t, ok, "no snapshot configured: the organisation's default")
}

// States map to the contract's; an errored sandbox or one stuck starting
// fails the wait with the provider's error or a timeout.
func TestStatesAndWaits(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	for state, want := range map[string]paddock.Status{
		"started": paddock.StatusRunning, "starting": paddock.StatusRunning, "stopped": paddock.StatusSuspended,
		"archived": paddock.StatusSuspended, "creating": paddock.StatusUnknown, "error": paddock.StatusUnknown,
		"migrating": paddock.StatusUnknown,
	} {
		srv.SetState("box", state, "")
		info, err := a.Get(ctx, h)
		require.NoError(t, err)
		assert.Equal(t, want, info.Status, state)
		assert.Equal(t, srv.ID("box"), info.ID)
		assert.Equal(t, "default", info.Image)
		assert.WithinDuration(t, time.Now(), info.CreatedAt, time.Minute)
	}
	srv.SetState("box", "build_failed", "the image did not build")
	_, err = a.Resume(ctx, h)
	require.ErrorIs(t, err, paddock.ErrProvider)
	assert.Contains(t, err.Error(), "the image did not build")

	srv.SetState("box", "starting", "")
	srv.Hold("box")
	short := newAdapter(t, srv, func(c *daytona.Config) { c.StartTimeout = 500 * time.Millisecond })
	began := time.Now()
	_, err = short.Resume(ctx, h)
	require.ErrorIs(t, err, paddock.ErrUnavailable, "stuck starting past the deadline")
	assert.Contains(t, err.Error(), paddock.DetailTimeout)
	assert.Less(t, time.Since(began), time.Minute, "the start timeout ended the wait for a sandbox held starting")

	_, err = a.Get(ctx, a.BuildHandle("absent"))
	require.ErrorIs(t, err, paddock.ErrNotFound)
	// A name that is another sandbox's id is not that sandbox.
	_, err = a.Get(ctx, a.BuildHandle(srv.ID("box")))
	require.ErrorIs(t, err, paddock.ErrNotFound)
}

// Suspend stops and waits; a stopped sandbox needs no call; a stop that
// loses a race (400: stopped meanwhile) is success; a 409 is waited out.
// Resume starts and waits, from stopped or archived.
func TestSuspendAndResume(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t, daytonatest.WithTransitions(100*time.Millisecond))
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	require.NoError(t, a.Suspend(ctx, h))
	assert.Equal(t, "stopped", srv.State("box"), "suspend waits for stopped")
	stops := srv.Count(stopRoute)
	require.NoError(t, a.Suspend(ctx, h))
	assert.Equal(t, stops, srv.Count(stopRoute), "a stopped sandbox is not stopped again")

	_, err = a.Resume(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, "started", srv.State("box"))

	srv.Fail(stopRoute, daytonatest.Body(http.StatusConflict, `{"statusCode":409,"message":"Sandbox state change in progress"}`))
	require.NoError(t, a.Suspend(ctx, h), "a 409 is waited out")
	assert.Equal(t, "stopped", srv.State("box"))

	// Archived: resume restores it.
	srv.SetState("box", "archived", "")
	_, err = a.Resume(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, "started", srv.State("box"))

	// The sandbox stopped between the lookup and the stop, so the stop
	// answers 400 (not stoppable): success.
	srv.SetState("box", "stopped", "")
	srv.Fail(getRoute, daytonatest.Body(http.StatusOK, `{"id":"`+srv.ID("box")+`","name":"box","state":"started"}`))
	stops = srv.Count(stopRoute)
	require.NoError(t, a.Suspend(ctx, h))
	assert.Equal(t, stops+1, srv.Count(stopRoute), "the stop was tried and refused")
	_, err = a.Resume(ctx, h)
	require.NoError(t, err)

	srv.Fail(startRoute, daytonatest.Body(http.StatusConflict, `{"statusCode":409,"message":"Sandbox state change in progress"}`))
	require.NoError(t, a.Suspend(ctx, h))
	_, err = a.Resume(ctx, h)
	require.NoError(t, err, "a 409 on start is waited out (mid-transition is weather)")

	_, err = a.Resume(ctx, a.BuildHandle("absent"))
	require.ErrorIs(t, err, paddock.ErrNotFound)
	require.ErrorIs(t, a.Suspend(ctx, a.BuildHandle("absent")), paddock.ErrNotFound)
}

// Destroy frees the name at once and is definitive; absence is success; a
// 409 is waited out.
func TestDestroy(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t, daytonatest.WithTransitions(time.Second))
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	id := srv.ID("box")
	require.NoError(t, a.Destroy(ctx, h))
	assert.Equal(t, "destroying", srv.State(id), "the id still answers for a while")
	_, err = a.Get(ctx, h)
	require.ErrorIs(t, err, paddock.ErrNotFound, "the name is free at once")
	require.NoError(t, a.Destroy(ctx, h), "an absent sandbox is destroyed already")
	_, err = a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err, "the name can be used again")

	srv.Fail(deleteRoute, daytonatest.Body(http.StatusConflict, `{"statusCode":409,"message":"Sandbox state change in progress"}`))
	before := srv.Count(deleteRoute)
	require.NoError(t, a.Destroy(ctx, h))
	assert.Equal(t, before+2, srv.Count(deleteRoute), "refused once, then done")
	assert.Empty(t, srv.Sandboxes())
}

// ListAllNames pages with the label filter and refuses a listing past 40
// pages; entries without a name are skipped.
func TestListAllNames(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	a := newAdapter(t, srv)
	var want []string
	for i := range 230 {
		name := fmt.Sprintf("s%03d", i)
		want = append(want, name)
		_, err := a.Create(ctx, name, paddock.CreateOpts{})
		require.NoError(t, err)
	}
	before := srv.Count(listRoute)
	names, err := a.ListAllNames(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, want, names)
	assert.Equal(t, before+3, srv.Count(listRoute), "three pages of 100")
	reqs := srv.Requests()
	assert.Contains(t, reqs[len(reqs)-1].Query, "labels=%7B%22paddock%22%3A%221%22%7D")

	srv.Fail(listRoute, daytonatest.Body(http.StatusOK, `{"items":[{"id":"x"},{"id":"y","name":"named"}],"nextCursor":null}`))
	names, err = a.ListAllNames(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"named"}, names)

	for range 40 {
		srv.Fail(listRoute, daytonatest.Body(http.StatusOK, `{"items":[],"nextCursor":"more"}`))
	}
	_, err = a.ListAllNames(ctx)
	require.ErrorIs(t, err, paddock.ErrTruncated)
}

// The network policy: an empty allow list blocks everything and reaches
// Daytona; domains are allowed alone; bad domains never leave.
func TestNetworkPolicy(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	require.NoError(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{}}))
	assert.Equal(t, map[string]any{"networkBlockAll": true, "domainAllowList": ""}, lastBody(t, srv, networkRoute))
	block, cidrs, domains := srv.Network("box")
	assert.True(t, block)
	assert.Empty(t, cidrs+domains)

	require.NoError(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{"example.com", "*.github.com"}}))
	assert.Equal(t, map[string]any{"networkBlockAll": false, "networkAllowList": "", "domainAllowList": "example.com,*.github.com"},
		lastBody(t, srv, networkRoute))
	block, _, domains = srv.Network("box")
	assert.False(t, block)
	assert.Equal(t, "example.com,*.github.com", domains)

	before := srv.Count(networkRoute)
	for _, bad := range [][]string{{"http://x"}, {"a b"}, strings.Split("a1.com,a2.com,a3.com,a4.com,a5.com,a6.com,a7.com,a8.com,a9.com,a10.com,a11.com", ",")} {
		require.ErrorIs(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: bad}), paddock.ErrInvalid, "%v", bad)
	}
	assert.Equal(t, before, srv.Count(networkRoute), "an invalid policy sends nothing")
	require.ErrorIs(t, a.ApplyNetworkPolicy(ctx, a.BuildHandle("absent"), paddock.NetworkPolicy{}), paddock.ErrNotFound)
}

// Without a key nothing is sent; the key never shows in printed forms,
// errors or logs; a JWT carries the organisation header.
func TestKeys(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	a := build(t, daytona.Config{APIURL: srv.APIURL()})
	_, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.ErrorIs(t, err, paddock.ErrDenied)
	assert.Empty(t, srv.Requests(), "nothing is sent without a key")

	key := srv.Key()
	cfg := daytona.Config{APIKey: paddock.NewSecret(key), APIURL: srv.APIURL()}
	a = build(t, cfg)
	for _, s := range []string{fmt.Sprintf("%v %+v %#v %s", a, a, a, a), fmt.Sprintf("%v %+v %#v", cfg, cfg, cfg)} {
		assert.NotContains(t, s, key)
	}
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	assert.NotContains(t, string(b), key)

	wrong := captured.Secret("dtn_wrong_" + key[4:16])
	w := build(t, daytona.Config{APIKey: paddock.NewSecret(wrong), APIURL: srv.APIURL(), Logger: testLogger()})
	_, err = w.Get(ctx, w.BuildHandle("box"))
	captured.Err(err)
	require.ErrorIs(t, err, paddock.ErrDenied)

	jwt := captured.Secret("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl")
	j := build(t, daytona.Config{APIKey: paddock.NewSecret(jwt), APIURL: srv.APIURL(), OrganizationID: "org-1", Logger: testLogger()})
	_, err = j.Get(ctx, j.BuildHandle("box"))
	captured.Err(err)
	reqs := srv.Requests()
	assert.Equal(t, "org-1", reqs[len(reqs)-1].Header.Get("X-Daytona-Organization-ID"), "a JWT names its organisation")
	assert.Zero(t, captured.Leaks())
}

// The richer parameters: an image with resources (built, so no snapshot),
// environment and labels, the egress policy at birth.
func TestCreateFromAnImage(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	a := newAdapter(t, srv, func(c *daytona.Config) { c.Snapshot = "paddock-test" })
	_, err := a.Create(ctx, "built", paddock.CreateOpts{Params: map[string]string{
		"image": "python:3.12-slim", "cpu": "2", "memory_gb": "4", "disk_gb": "10",
		"env.MODE": "agent", "label.team": "infra", "network_block_all": "true", "domain_allow_list": "pypi.org,*.github.com"}})
	require.NoError(t, err)
	body := lastBody(t, srv, createRoute)
	assert.Equal(t, map[string]any{"dockerfileContent": "FROM python:3.12-slim"}, body["buildInfo"])
	assert.NotContains(t, body, "snapshot", "an image replaces the configured snapshot")
	assert.Equal(t, float64(2), body["cpu"])
	assert.Equal(t, float64(4), body["memory"])
	assert.Equal(t, float64(10), body["disk"])
	assert.Equal(t, map[string]any{"MODE": "agent"}, body["env"])
	assert.Equal(t, map[string]any{"paddock": "1", "team": "infra"}, body["labels"])
	assert.Equal(t, true, body["networkBlockAll"])
	assert.Equal(t, "pypi.org,*.github.com", body["domainAllowList"])
	for _, bad := range []map[string]string{
		{"cpu": "2"}, {"image": "x", "snapshot": "y"}, {"cpu": "zero", "image": "x"}, {"network_block_all": "maybe"},
		{"domain_allow_list": "not a domain"}, {"label.paddock": "0"}, {"env.": "x"},
	} {
		_, err := a.Create(ctx, "other", paddock.CreateOpts{Params: bad})
		require.ErrorIs(t, err, paddock.ErrInvalid, "%v", bad)
	}
}
