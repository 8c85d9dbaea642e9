package daytona_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/daytona"
	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
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
	adaptertest.NeedsCredential(t, build(t, daytona.Config{APIURL: srv.APIURL()}), srv)

	key := srv.Key()
	cfg := daytona.Config{APIKey: paddock.NewSecret(key), APIURL: srv.APIURL()}
	a := build(t, cfg)
	adaptertest.Hidden(t, key, a, cfg)

	wrong := captured.Secret("dtn_wrong_" + key[4:16])
	w := build(t, daytona.Config{APIKey: paddock.NewSecret(wrong), APIURL: srv.APIURL(), Logger: testLogger()})
	_, err := w.Get(ctx, w.BuildHandle("box"))
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

// Toolbox routes as daytonatest records them.
const (
	executeRoute = "TOOLBOX POST /process/execute"
	sessionRoute = "TOOLBOX POST /process/session"
	execRoute    = "TOOLBOX POST /process/session/{session}/exec"
	commandRoute = "TOOLBOX GET /process/session/{session}/command/{command}"
	inputRoute   = "TOOLBOX POST /process/session/{session}/command/{command}/input"
	logsRoute    = "TOOLBOX GET /process/session/{session}/command/{command}/logs"
	uploadRoute  = "TOOLBOX POST /files/upload"
	downRoute    = "TOOLBOX GET /files/download"
)

// faultCase is one injected fault: what to prepare, the faults queued per
// route, the call, what it must answer, and how many requests each route
// must have seen (a create or an exec is never silently repeated).
type faultCase struct {
	setup  func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server)
	faults map[string][]daytonatest.Fault
	call   func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server) (string, error)
	want   string // the answer when there is no error
	kind   error
	detail string
	sends  map[string]int
}

func errBody(status int, msg string) daytonatest.Fault {
	return daytonatest.Body(status, fmt.Sprintf(`{"statusCode":%d,"message":%q}`, status, msg))
}

var itoa = strconv.Itoa

// Every fault maps to its exact kind; a 409 mid-transition and a stop of
// a stopped sandbox are waited out or taken as done; a follow that closes
// with no exit code recorded is closed_before_exit, never exit 0. Rows run
// one at a time so each proves it leaves no goroutine behind.
func TestFaults(t *testing.T) {
	one := func(route string, f ...daytonatest.Fault) map[string][]daytonatest.Fault {
		return map[string][]daytonatest.Fault{route: f}
	}
	created := func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) {
		_, err := a.Create(ctx, "box", paddock.CreateOpts{})
		require.NoError(t, err)
	}
	stopped := func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server) {
		created(t, a, srv)
		require.NoError(t, a.Suspend(ctx, a.BuildHandle("box")))
	}
	box := func(a *daytona.Adapter) paddock.Handle { return a.BuildHandle("box") }
	create := func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
		_, err := a.Create(ctx, "box", paddock.CreateOpts{})
		return "created", err
	}
	get := func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
		info, err := a.Get(ctx, box(a))
		return string(info.Status), err
	}
	resume := func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
		_, err := a.Resume(ctx, box(a))
		return "resumed", err
	}
	suspend := func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
		return "suspended", a.Suspend(ctx, box(a))
	}
	exec := func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
		res, err := a.Exec(ctx, box(a), paddock.NewCmd("sh", "-c", "printf out; exit 2"), paddock.ExecOpts{})
		return string(res.Stdout) + " " + itoa(res.ExitCode), err
	}
	spawn := func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
		st, err := a.Spawn(ctx, box(a), paddock.NewCmd("sh", "-c", "printf out; printf err >&2; exit 3"), paddock.SpawnOpts{})
		if err != nil {
			return "", err
		}
		defer st.Close()
		return adaptertest.Summary(t, st, time.Minute)
	}
	tests := map[string]faultCase{
		"429 with a hint": {faults: one(createRoute, daytonatest.RateLimited(7)), call: create, kind: paddock.ErrRateLimited, detail: "7s",
			sends: map[string]int{createRoute: 1}},
		"429 without a hint": {faults: one(createRoute, daytonatest.RateLimited(-1)), call: create, kind: paddock.ErrRateLimited,
			sends: map[string]int{createRoute: 1}},
		"401": {setup: created, faults: one(getRoute, daytonatest.Status(401)), call: get, kind: paddock.ErrDenied, detail: "401"},
		"403 on create": {faults: one(createRoute, daytonatest.Status(403)), call: create, kind: paddock.ErrDenied,
			sends: map[string]int{createRoute: 1}},
		"404 mid-create": {faults: one(getRoute, daytonatest.Status(404)), call: create, kind: paddock.ErrNotFound,
			sends: map[string]int{createRoute: 1}},
		"409 on create adopts": {setup: created, faults: one(createRoute, errBody(409, "Sandbox with name box already exists")),
			call: create, want: "created", sends: map[string]int{createRoute: 1}},
		"409 on start is waited out": {setup: stopped, faults: one(startRoute, errBody(409, "Sandbox state change in progress")),
			call: resume, want: "resumed", sends: map[string]int{startRoute: 2}},
		"400 on stop of a stopped sandbox": {setup: func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server) {
			created(t, a, srv)
			srv.SetState("box", "stopped", "")
			srv.Fail(getRoute, daytonatest.Body(200, `{"id":"`+srv.ID("box")+`","name":"box","state":"started"}`))
		}, call: suspend, want: "suspended", sends: map[string]int{stopRoute: 1}},
		"500 on create": {faults: one(createRoute, daytonatest.Status(500)), call: create, kind: paddock.ErrUnavailable, detail: "500",
			sends: map[string]int{createRoute: 1}},
		"503 on get": {setup: created, faults: one(getRoute, daytonatest.Status(503)), call: get, kind: paddock.ErrUnavailable},
		"502 on list": {faults: one(listRoute, daytonatest.Status(502)), kind: paddock.ErrUnavailable,
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				_, err := a.ListAllNames(ctx)
				return "", err
			}},
		"500 on delete": {setup: created, faults: one(deleteRoute, daytonatest.Status(500)), kind: paddock.ErrUnavailable,
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				return "", a.Destroy(ctx, box(a))
			}},
		"503 on start": {setup: stopped, faults: one(startRoute, daytonatest.Status(503)), call: resume, kind: paddock.ErrUnavailable},
		"500 on stop":  {setup: created, faults: one(stopRoute, daytonatest.Status(500)), call: suspend, kind: paddock.ErrUnavailable},
		"504 on network": {setup: created, faults: one(networkRoute, daytonatest.Status(504)), kind: paddock.ErrUnavailable,
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				return "", a.ApplyNetworkPolicy(ctx, box(a), paddock.NetworkPolicy{})
			}},
		"500 on execute": {setup: created, faults: one(executeRoute, daytonatest.Status(500)), call: exec, kind: paddock.ErrUnavailable,
			sends: map[string]int{executeRoute: 1}},
		"408 from execute is the exec timeout": {setup: created, faults: one(executeRoute, errBody(408, "request timeout: command execution timeout")),
			call: exec, kind: paddock.ErrExecTimeout},
		"500 on session create": {setup: created, faults: one(sessionRoute, daytonatest.Status(500)), call: spawn, kind: paddock.ErrUnavailable,
			sends: map[string]int{sessionRoute: 1, execRoute: 0}},
		"500 on session exec": {setup: created, faults: one(execRoute, daytonatest.Status(500)), call: spawn, kind: paddock.ErrUnavailable,
			sends: map[string]int{execRoute: 1}},
		"an async exec without a command id": {setup: created, faults: one(execRoute, daytonatest.Body(202, `{"unexpected":true}`)),
			call: spawn, kind: paddock.ErrProvider, sends: map[string]int{execRoute: 1}},
		"503 on the follow's handshake": {setup: created, faults: one(logsRoute, daytonatest.Status(503)), call: spawn, kind: paddock.ErrUnavailable},
		"500 on every exit-code read": {setup: created,
			faults: one(commandRoute, daytonatest.Status(500), daytonatest.Status(500), daytonatest.Status(500)),
			call:   spawn, kind: paddock.ErrClosedBeforeExit, sends: map[string]int{commandRoute: 3}},
		"a follow that closes before the exit, which never comes": {setup: func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server) {
			created(t, a, srv)
			srv.CutFollows(1)
			srv.WithholdExits(1)
		}, call: spawn, kind: paddock.ErrClosedBeforeExit},
		"a sandbox stuck starting past the deadline": {setup: func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server) {
			created(t, a, srv)
			srv.SetState("box", "starting", "")
		}, call: exec, kind: paddock.ErrUnavailable, detail: paddock.DetailTimeout, sends: map[string]int{executeRoute: 0}},
		"an errored sandbox": {setup: func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server) {
			created(t, a, srv)
			srv.SetState("box", "error", "disk failure")
		}, call: exec, kind: paddock.ErrProvider, detail: "disk failure"},
		"a failed build": {setup: func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server) {
			created(t, a, srv)
			srv.SetState("box", "build_failed", "no such image")
		}, call: resume, kind: paddock.ErrProvider, detail: "build_failed"},
		"500 on upload": {setup: created, faults: one(uploadRoute, daytonatest.Status(500)), kind: paddock.ErrUnavailable,
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				return "", a.WriteFile(ctx, box(a), "/tmp/f", 0o644, strings.NewReader("data"))
			}},
		"a reset mid-download": {setup: func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server) {
			created(t, a, srv)
			require.NoError(t, a.WriteFile(ctx, box(a), "/tmp/f", 0o644, strings.NewReader("0123456789")))
			srv.Fail(downRoute, daytonatest.Fault{Status: 200, Body: "01234", DeclaredLength: 10})
		}, kind: paddock.ErrUnavailable,
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				rc, err := a.ReadFile(ctx, box(a), "/tmp/f")
				if err != nil {
					return "", err
				}
				defer rc.Close()
				b, err := io.ReadAll(rc)
				if err != nil {
					return string(b), &paddock.UnavailableError{Detail: err.Error()} // the reader reports the cut
				}
				return string(b), nil
			}},
		"418 on create": {faults: one(createRoute, errBody(418, "teapot")), call: create, kind: paddock.ErrInvalid, detail: "418",
			sends: map[string]int{createRoute: 1}},
		"422 with a list body on start": {setup: stopped, faults: one(startRoute, daytonatest.Body(422, `["resume is not supported"]`)),
			call: resume, kind: paddock.ErrInvalid, detail: "422"},
		"599 with a text body on get": {setup: created, faults: one(getRoute, daytonatest.Body(599, "upstream gone")), call: get,
			kind: paddock.ErrUnavailable, detail: "599"},
		"404 in plain text on delete is absence": {setup: created, faults: one(deleteRoute, daytonatest.Body(404, "gone")), want: "deleted",
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				return "deleted", a.Destroy(ctx, box(a))
			}},
		// A 204 is success: the adapter goes on to move the staging file
		// over the path, which this fault never stored.
		"an upload answered 204": {setup: created, faults: one(uploadRoute, daytonatest.Body(204, "")), kind: paddock.ErrNotFound,
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				return "", a.WriteFile(ctx, box(a), "/tmp/f", 0o644, strings.NewReader("data"))
			}},
		"418 on upload": {setup: created, faults: one(uploadRoute, errBody(418, "teapot")), kind: paddock.ErrInvalid,
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				return "", a.WriteFile(ctx, box(a), "/tmp/f", 0o644, strings.NewReader("data"))
			}},
		"a malformed sandbox": {setup: created, faults: one(getRoute, daytonatest.Body(200, `{"id":`)), call: get, kind: paddock.ErrProvider},
		"an oversize list": {faults: one(listRoute, daytonatest.Body(200, `{"items":[],"x":"`+strings.Repeat("x", 16<<20)+`"}`)),
			kind: paddock.ErrProvider, detail: "larger than",
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				_, err := a.ListAllNames(ctx)
				return "", err
			}},
		"a list page cut short": {faults: one(listRoute, daytonatest.Fault{Status: 200, Body: `{"items":[{"na`, DeclaredLength: 4096}),
			kind: paddock.ErrUnavailable,
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				_, err := a.ListAllNames(ctx)
				return "", err
			}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			runFault(t, tc)
		})
	}
}

func runFault(t *testing.T, tc faultCase) {
	srv := daytonatest.NewServer(t, fastFollow())
	defer srv.Close()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	a := newAdapter(t, srv, func(c *daytona.Config) { c.Transport = tr; c.StartTimeout = 3 * time.Second })
	if tc.setup != nil {
		tc.setup(t, a, srv)
	}
	sent := adaptertest.Sends(t, srv, tc.sends)
	for route, faults := range tc.faults {
		for _, f := range faults {
			srv.Fail(route, f)
		}
	}
	got, err := tc.call(t, a, srv)
	captured.Err(err)
	adaptertest.Answered(t, got, err, tc.want, tc.kind, tc.detail, srv.Key())
	sent()
}

// The service RunLeases' child processes reach.
const (
	leaseURLEnv = "PADDOCK_DAYTONA_LEASE_URL"
	leaseKeyEnv = "PADDOCK_DAYTONA_LEASE_KEY"
)

func TestLeases(t *testing.T) {
	t.Parallel()
	url, key := os.Getenv(leaseURLEnv), os.Getenv(leaseKeyEnv)
	if url == "" {
		srv := daytonatest.NewServer(t)
		url, key = srv.APIURL(), srv.Key()
	}
	conformance.RunLeases(t, leaseSetup(t, url, key))
}

// TestLiveLeases runs RunLeases against the real Daytona service with the
// key in DAYTONA_API_KEY (DAYTONA_API_URL optional).
func TestLiveLeases(t *testing.T) {
	t.Parallel()
	key := captured.Secret(conformance.LiveCredential(t, "DAYTONA_API_KEY", "DAYTONA_API_URL"))
	url := cmp.Or(os.Getenv("DAYTONA_API_URL"), daytona.DefaultAPIURL)
	conformance.RunLeases(t, leaseSetup(t, url, key))
}

// leaseSetup is RunLeases on the Daytona API at url with key.
func leaseSetup(t *testing.T, url, key string) conformance.LeaseSetup {
	raw := adaptertest.Caller(t, url, "Authorization", "Bearer "+key)
	call := func(method, path, body string) int { status, _ := raw(method, path, body); return status }
	return conformance.LeaseSetup{
		ChildEnv: []string{leaseURLEnv + "=" + url, leaseKeyEnv + "=" + key},
		Adapter: func(t *testing.T) paddock.Adapter {
			a, err := daytona.New(daytona.Config{APIKey: paddock.NewSecret(key), APIURL: url, Logger: testLogger(),
				Timeout: 2 * time.Minute, StartTimeout: 2 * time.Minute})
			require.NoError(t, err)
			return a
		},
		Foreign: func(t *testing.T, name string) func() bool {
			require.Equal(t, http.StatusOK, call(http.MethodPost, "/sandbox", `{"name":"`+name+`","labels":{"team":"ops"}}`))
			t.Cleanup(func() { call(http.MethodDelete, "/sandbox/"+name, "") })
			return func() bool { return call(http.MethodGet, "/sandbox/"+name, "") == http.StatusOK }
		},
	}
}

func TestReapPastMaxAge(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	conformance.RunMaxAge(t, newAdapter(t, srv, slowMachine, func(c *daytona.Config) { c.MaxAge = time.Second }), time.Second)
}
