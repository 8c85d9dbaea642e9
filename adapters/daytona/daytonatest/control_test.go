package daytonatest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decode reads a JSON answer into a map.
func decode(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m), string(data))
	return m
}

// Both planes require the Bearer key; the error bodies have each plane's
// shape (and some toolbox errors have none).
func TestKeysAndErrorShapes(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	tb := create(t, srv, "box")
	for _, path := range []string{"/api/sandbox/box", tb + "/process/session"} {
		req, err := http.NewRequest(http.MethodGet, srv.URL()+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer wrong")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, path)
	}
	status, _, data := call(t, srv, http.MethodGet, "/api/sandbox/nope", nil)
	require.Equal(t, http.StatusNotFound, status)
	body := decode(t, data)
	assert.Equal(t, "Sandbox with ID or name nope not found", body["message"])
	assert.Equal(t, "Not Found", body["error"])
	assert.Equal(t, float64(404), body["statusCode"])
	assert.Equal(t, "/api/sandbox/nope", body["path"])
	assert.NotEmpty(t, body["timestamp"])

	status, _, data = call(t, srv, http.MethodGet, tb+"/process/session/none", nil)
	require.Equal(t, http.StatusNotFound, status)
	body = decode(t, data)
	assert.Equal(t, "NOT_FOUND", body["code"])
	assert.Equal(t, "GET", body["method"])
	status, _, data = call(t, srv, http.MethodPost, tb+"/process/session/none/exec", []byte("{bad json"))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Empty(t, data, "an empty 400")
	status, h, data := call(t, srv, http.MethodPut, tb+"/process/execute", nil)
	assert.Equal(t, http.StatusNotFound, status, "no 405")
	assert.Equal(t, "404 page not found", string(data))
	assert.Equal(t, "text/plain", h.Get("Content-Type"))
	status, _, _ = call(t, srv, http.MethodPost, tb+"/files/upload-v2?path=/tmp/x", []byte("x"))
	assert.Equal(t, http.StatusNotFound, status, "upload-v2 is not in the public daemon")

	// The SDK's routes newer than the daemon and control plane followed
	// here (v0.190.0) answer their unknown route's 404, as those do.
	for _, route := range []struct{ method, path string }{
		{http.MethodPost, "/api/sandbox/box/backup"},
		{http.MethodGet, "/api/sandbox/box/telemetry/metrics"},
		{http.MethodPut, "/api/sandbox/box/secrets"},
		{http.MethodGet, "/api/sandbox/box/signing-key"},
		{http.MethodPost, "/api/sandbox/box/signing-key/rotate"},
	} {
		status, _, data := call(t, srv, route.method, route.path, nil)
		assert.Equal(t, http.StatusNotFound, status, route.path)
		assert.Equal(t, "Cannot "+route.method+" "+route.path, decode(t, data)["message"], route.path)
	}
	for _, route := range []struct{ method, path string }{
		{http.MethodGet, "/system/metrics"}, {http.MethodPost, "/env"},
	} {
		status, _, data := call(t, srv, route.method, tb+route.path, nil)
		assert.Equal(t, http.StatusNotFound, status, route.path)
		assert.Equal(t, "404 page not found", string(data), route.path)
	}
}

// Create validates as Daytona does: the snapshot and resources before the
// name; unknown fields are ignored; an absent snapshot is the default.
func TestCreateValidates(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	steps := []struct {
		body   map[string]any
		status int
	}{
		{map[string]any{"name": "a", "snapshot": "nope"}, http.StatusBadRequest},
		{map[string]any{"name": "a", "cpu": 2}, http.StatusBadRequest},
		{map[string]any{"name": "b", "ttlMinutes": 0}, http.StatusOK},
		{map[string]any{"name": "b"}, http.StatusConflict},
		{map[string]any{"name": "b", "snapshot": "nope"}, http.StatusBadRequest},
		{map[string]any{"name": "c", "buildInfo": map[string]string{"dockerfileContent": "FROM alpine"}, "cpu": 2}, http.StatusOK},
		{map[string]any{"name": "d", "snapshot": "default", "buildInfo": map[string]string{"dockerfileContent": "FROM alpine"}}, http.StatusBadRequest},
	}
	for _, st := range steps {
		status, _, data := call(t, srv, http.MethodPost, "/api/sandbox", st.body)
		assert.Equal(t, st.status, status, "%v: %s", st.body, data)
	}
	status, _, data := call(t, srv, http.MethodGet, "/api/sandbox/b", nil)
	require.Equal(t, http.StatusOK, status)
	b := decode(t, data)
	assert.Equal(t, "default", b["snapshot"], "an absent snapshot is the default")
	assert.Equal(t, "started", b["state"])
	for _, field := range []string{"id", "organizationId", "name", "user", "env", "labels", "public", "networkBlockAll", "target", "cpu", "gpu", "memory", "disk", "toolboxProxyUrl"} {
		assert.Contains(t, b, field, "the Sandbox object carries %s", field)
	}
	// An id resolves first, then a name.
	status, _, _ = call(t, srv, http.MethodGet, "/api/sandbox/"+b["id"].(string), nil)
	assert.Equal(t, http.StatusOK, status)
}

// The state guards: start on started is a no-op, stop is not idempotent,
// a transition under way is 409, archive needs stopped, an errored
// sandbox does not start; delete frees the name at once and the id
// answers destroying for a while.
func TestStateGuards(t *testing.T) {
	t.Parallel()
	// Transitions of seconds: each guard below must be met mid-transition,
	// even on a loaded machine.
	srv := daytonatest.NewServer(t, daytonatest.WithTransitions(2*time.Second))
	status, _, _ := call(t, srv, http.MethodPost, "/api/sandbox", map[string]any{"name": "box"})
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "creating", srv.State("box"))
	status, _, _ = call(t, srv, http.MethodPost, "/api/sandbox/box/stop", nil)
	assert.Equal(t, http.StatusConflict, status, "mid-transition")
	status, _, _ = call(t, srv, http.MethodDelete, "/api/sandbox/box", nil)
	assert.Equal(t, http.StatusConflict, status, "a delete waits for the transition too")
	require.Eventually(t, func() bool { return srv.State("box") == "started" }, time.Minute, 10*time.Millisecond)
	status, _, _ = call(t, srv, http.MethodPost, "/api/sandbox/box/start", nil)
	assert.Equal(t, http.StatusOK, status, "start on started is a no-op")
	status, _, _ = call(t, srv, http.MethodPost, "/api/sandbox/box/archive", nil)
	assert.Equal(t, http.StatusBadRequest, status, "archive needs stopped")
	status, _, _ = call(t, srv, http.MethodPost, "/api/sandbox/box/stop", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "stopping", srv.State("box"))
	require.Eventually(t, func() bool { return srv.State("box") == "stopped" }, time.Minute, 10*time.Millisecond)
	status, _, data := call(t, srv, http.MethodPost, "/api/sandbox/box/stop", nil)
	assert.Equal(t, http.StatusBadRequest, status, "stop is not idempotent")
	assert.Contains(t, string(data), "Sandbox is not in a stoppable state")
	status, _, _ = call(t, srv, http.MethodPost, "/toolbox/"+srv.ID("box")+"/process/execute", map[string]any{"command": "true"})
	assert.Equal(t, http.StatusBadGateway, status, "a stopped sandbox's toolbox is the proxy's 502")
	srv.SetState("box", "error", "broken")
	status, _, _ = call(t, srv, http.MethodPost, "/api/sandbox/box/start", nil)
	assert.Equal(t, http.StatusBadRequest, status, "an errored sandbox does not start")
	srv.SetState("box", "stopped", "")
	id := srv.ID("box")
	status, _, _ = call(t, srv, http.MethodDelete, "/api/sandbox/box", nil)
	require.Equal(t, http.StatusOK, status)
	status, _, _ = call(t, srv, http.MethodGet, "/api/sandbox/box", nil)
	assert.Equal(t, http.StatusNotFound, status, "the name is free at once")
	status, _, data = call(t, srv, http.MethodGet, "/api/sandbox/"+id, nil)
	require.Equal(t, http.StatusOK, status, "the id answers while it is destroyed")
	assert.Equal(t, "destroying", decode(t, data)["state"])
	require.Eventually(t, func() bool { return srv.State(id) == "" }, time.Minute, 10*time.Millisecond)
	status, _, _ = call(t, srv, http.MethodPost, "/api/sandbox", map[string]any{"name": "box"})
	assert.Equal(t, http.StatusOK, status, "the name can be used again")
}

// The list: a labels filter (JSON), limit 1..200, an opaque cursor,
// {items, nextCursor|null}; the network settings' validation and rules.
func TestListAndNetwork(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	for _, n := range []string{"a", "b", "c"} {
		status, _, _ := call(t, srv, http.MethodPost, "/api/sandbox", map[string]any{"name": n, "labels": map[string]string{"paddock": "1"}})
		require.Equal(t, http.StatusOK, status)
	}
	call(t, srv, http.MethodPost, "/api/sandbox", map[string]any{"name": "other"})
	q := url.Values{"labels": {`{"paddock":"1"}`}, "limit": {"2"}}
	status, _, data := call(t, srv, http.MethodGet, "/api/sandbox?"+q.Encode(), nil)
	require.Equal(t, http.StatusOK, status)
	var page struct {
		Items      []map[string]any `json:"items"`
		NextCursor *string          `json:"nextCursor"`
	}
	require.NoError(t, json.Unmarshal(data, &page))
	require.Len(t, page.Items, 2)
	require.NotNil(t, page.NextCursor)
	q.Set("cursor", *page.NextCursor)
	_, _, data = call(t, srv, http.MethodGet, "/api/sandbox?"+q.Encode(), nil)
	require.NoError(t, json.Unmarshal(data, &page))
	require.Len(t, page.Items, 1)
	assert.Nil(t, page.NextCursor, "null on the last page")
	for _, bad := range []string{"labels=notjson", "limit=0", "limit=201", "cursor=not-a-cursor"} {
		status, _, _ = call(t, srv, http.MethodGet, "/api/sandbox?"+bad, nil)
		assert.Equal(t, http.StatusBadRequest, status, bad)
	}

	for body, want := range map[string]int{
		`{}`: 400, `{"domainAllowList":["a.com"]}`: 400, `{"networkBlockAll":"yes"}`: 400,
		`{"domainAllowList":"bad domain!"}`: 400, `{"domainAllowList":"a1.com,a2.com,a3.com,a4.com,a5.com,a6.com,a7.com,a8.com,a9.com,a10.com,a11.com"}`: 400,
		`{"networkBlockAll":true,"domainAllowList":"example.com,*.github.com"}`: 200,
	} {
		status, _, data := call(t, srv, http.MethodPost, "/api/sandbox/a/network-settings", []byte(body))
		assert.Equal(t, want, status, "%s: %s", body, data)
	}
	block, _, domains := srv.Network("a")
	assert.True(t, block)
	assert.Equal(t, "example.com,*.github.com", domains)
	call(t, srv, http.MethodPost, "/api/sandbox/a/network-settings", []byte(`{"networkAllowList":"10.0.0.0/8"}`))
	block, cidrs, _ := srv.Network("a")
	assert.False(t, block, "a CIDR list lifts block-all")
	assert.Equal(t, "10.0.0.0/8", cidrs)
	call(t, srv, http.MethodPost, "/api/sandbox/a/network-settings", []byte(`{"networkBlockAll":true}`))
	block, cidrs, _ = srv.Network("a")
	assert.True(t, block)
	assert.Empty(t, cidrs, "block-all clears the CIDR list")
	status, _, data = call(t, srv, http.MethodGet, "/api/sandbox/a/toolbox-proxy-url", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, srv.URL()+"/toolbox", decode(t, data)["url"])
}

// The interval setters, public and last activity, as the control plane
// answers them: the Sandbox object with the interval resolved (auto-stop
// and auto-archive never negative, an auto-archive of 0 or past the
// longest is the longest, any auto-delete), 404 for an unknown sandbox,
// 500 for an interval that is not a number.
func TestIntervalsAndPublic(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	create(t, srv, "box")
	for _, tc := range []struct {
		route  string
		status int
		field  string
		want   any
	}{
		{"/api/sandbox/box/autostop/30", http.StatusOK, "autoStopInterval", 30.0},
		{"/api/sandbox/box/autostop/0", http.StatusOK, "autoStopInterval", 0.0},
		{"/api/sandbox/box/autostop/-1", http.StatusBadRequest, "message", "Auto-stop interval must be non-negative"},
		{"/api/sandbox/box/autoarchive/60", http.StatusOK, "autoArchiveInterval", 60.0},
		{"/api/sandbox/box/autoarchive/0", http.StatusOK, "autoArchiveInterval", 43200.0},
		{"/api/sandbox/box/autoarchive/99999", http.StatusOK, "autoArchiveInterval", 43200.0},
		{"/api/sandbox/box/autoarchive/-5", http.StatusBadRequest, "message", "Auto-archive interval must be non-negative"},
		{"/api/sandbox/box/autodelete/-1", http.StatusOK, "autoDeleteInterval", -1.0},
		{"/api/sandbox/box/autodelete/0", http.StatusOK, "autoDeleteInterval", 0.0},
		{"/api/sandbox/box/autostop/soon", http.StatusInternalServerError, "message", "Internal server error"},
		{"/api/sandbox/nobox/autostop/5", http.StatusNotFound, "message", "Sandbox with ID or name nobox not found"},
		{"/api/sandbox/box/public/true", http.StatusOK, "public", true},
		{"/api/sandbox/box/public/false", http.StatusOK, "public", false},
	} {
		status, _, data := call(t, srv, http.MethodPost, tc.route, nil)
		require.Equal(t, tc.status, status, "%s: %s", tc.route, data)
		var body map[string]any
		require.NoError(t, json.Unmarshal(data, &body), tc.route)
		assert.Equal(t, tc.want, body[tc.field], tc.route)
	}
	status, _, data := call(t, srv, http.MethodGet, "/api/sandbox/box", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, string(data), `"autoStopInterval":0`, "the last value set stays")
	status, _, data = call(t, srv, http.MethodPost, "/api/sandbox/box/last-activity", nil)
	assert.Equal(t, http.StatusCreated, status)
	assert.Empty(t, data)
}

// Pause and recover as the control plane answers them for the sandboxes
// here: a started container cannot be paused (422), a sandbox not started
// is refused first (400), and no sandbox has a recoverable error (400).
func TestPauseAndRecover(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	create(t, srv, "box")
	for _, tc := range []struct {
		route, stop string
		status      int
		message     string
	}{
		{"/api/sandbox/box/pause", "", http.StatusUnprocessableEntity, "Pausing is not supported for this sandbox"},
		{"/api/sandbox/box/recover", "", http.StatusBadRequest, "Sandbox is not in a recoverable state"},
		{"/api/sandbox/nobox/pause", "", http.StatusNotFound, "Sandbox with ID or name nobox not found"},
		{"/api/sandbox/box/pause", "/api/sandbox/box/stop", http.StatusBadRequest, "Sandbox must be in started state to pause"},
	} {
		if tc.stop != "" {
			status, _, data := call(t, srv, http.MethodPost, tc.stop, nil)
			require.Equal(t, http.StatusOK, status, string(data))
			require.Eventually(t, func() bool { return srv.State("box") == "stopped" }, time.Minute, 10*time.Millisecond)
		}
		status, _, data := call(t, srv, http.MethodPost, tc.route, nil)
		require.Equal(t, tc.status, status, "%s: %s", tc.route, data)
		assert.Equal(t, tc.message, decode(t, data)["message"], tc.route)
	}
}

// A container sandbox (every one here, and Daytona's default class) does
// not fork: the control plane refuses it with 422, and it has no fork
// relations.
func TestForkIsForVMs(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	create(t, srv, "box")
	status, _, data := call(t, srv, http.MethodPost, "/api/sandbox/box/fork", map[string]any{"name": "copy"})
	assert.Equal(t, http.StatusUnprocessableEntity, status)
	assert.Equal(t, "Forking is not supported for this sandbox", decode(t, data)["message"])
	for _, path := range []string{"/api/sandbox/box/forks", "/api/sandbox/box/ancestors"} {
		status, _, data := call(t, srv, http.MethodGet, path, nil)
		assert.Equal(t, http.StatusOK, status, path)
		assert.JSONEq(t, `[]`, string(data), path)
	}
	status, _, data = call(t, srv, http.MethodGet, "/api/sandbox/box/parent", nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "Parent sandbox not found for sandbox box", decode(t, data)["message"])
	status, _, _ = call(t, srv, http.MethodPost, "/api/sandbox/nope/fork", nil)
	assert.Equal(t, http.StatusNotFound, status)
}
