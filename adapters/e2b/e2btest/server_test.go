package e2btest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// call sends one control-plane request with the server's key.
func call(t *testing.T, srv *e2btest.Server, method, path string, body any) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, srv.URL()+path, rd)
	require.NoError(t, err)
	req.Header.Set("X-API-Key", srv.Key())
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header, data
}

func create(t *testing.T, srv *e2btest.Server, body map[string]any) string {
	t.Helper()
	status, _, data := call(t, srv, http.MethodPost, "/sandboxes", body)
	require.Equal(t, http.StatusCreated, status, string(data))
	var out map[string]any
	require.NoError(t, json.Unmarshal(data, &out))
	id := out["sandboxID"].(string)
	assert.Regexp(t, `^i[a-z0-9]{20}$`, id, "ids are E2B's shape, with no dash")
	assert.Equal(t, e2btest.EnvdVersion, out["envdVersion"])
	return id
}

func TestCreateValidatesAsE2BDoes(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	for name, tc := range map[string]struct {
		body   any
		status int
	}{
		"no template":               {map[string]any{}, http.StatusBadRequest},
		"unknown template":          {map[string]any{"templateID": "nope"}, http.StatusNotFound},
		"zero timeout":              {map[string]any{"templateID": "base", "timeout": 0}, http.StatusBadRequest},
		"a timeout too long":        {map[string]any{"templateID": "base", "timeout": 25 * 3600}, http.StatusBadRequest},
		"a domain without deny-all": {map[string]any{"templateID": "base", "network": map[string]any{"allowOut": []string{"example.com"}}}, http.StatusBadRequest},
		"a tagged template":         {map[string]any{"templateID": "base:latest"}, http.StatusCreated},
	} {
		status, _, data := call(t, srv, http.MethodPost, "/sandboxes", tc.body)
		assert.Equal(t, tc.status, status, "%s: %s", name, data)
	}
	req, err := http.NewRequest(http.MethodGet, srv.URL()+"/v2/sandboxes", nil)
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "no key, no answer")
	// The current JS SDK creates through /v2.
	status, _, _ := call(t, srv, http.MethodPost, "/v2/sandboxes", map[string]any{"templateID": "base"})
	assert.Equal(t, http.StatusCreated, status)
}

func TestListFiltersOrdersAndPages(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	var mine []string
	for i := range 5 {
		mine = append(mine, create(t, srv, map[string]any{"templateID": "base", "metadata": map[string]string{"owner": "me", "n": string(rune('a' + i))}}))
		srv.Advance(time.Second) // each starts later than the one before
	}
	create(t, srv, map[string]any{"templateID": "base", "metadata": map[string]string{"owner": "you"}})
	create(t, srv, map[string]any{"templateID": "base"}) // no metadata: never matches a filter

	filter := url.QueryEscape("owner") + "=" + url.QueryEscape("me")
	var got []string
	token := ""
	pages := 0
	for {
		q := url.Values{"metadata": {filter}, "limit": {"2"}}
		if token != "" {
			q.Set("nextToken", token)
		}
		status, header, data := call(t, srv, http.MethodGet, "/v2/sandboxes?"+q.Encode(), nil)
		require.Equal(t, http.StatusOK, status, string(data))
		var page []map[string]any
		require.NoError(t, json.Unmarshal(data, &page))
		for _, s := range page {
			got = append(got, s["sandboxID"].(string))
		}
		pages++
		token = header.Get("X-Next-Token")
		if token == "" {
			break
		}
	}
	assert.Equal(t, 3, pages)
	want := []string{mine[4], mine[3], mine[2], mine[1], mine[0]}
	assert.Equal(t, want, got, "newest first, every match once")

	for name, q := range map[string]string{
		"a malformed filter": "metadata=" + url.QueryEscape("a=b=c"),
		"a bad token":        "nextToken=%21%21",
		"a bad order":        "order=sideways",
		"a bad limit":        "limit=101",
	} {
		status, _, _ := call(t, srv, http.MethodGet, "/v2/sandboxes?"+q, nil)
		assert.Equal(t, http.StatusBadRequest, status, name)
	}
	status, _, data := call(t, srv, http.MethodGet, "/v2/sandboxes?metadata="+url.QueryEscape("owner=nobody"), nil)
	require.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `[]`, string(data), "an empty listing is an empty array")
}

func TestLifecycleRoutes(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base", "timeout": 60, "autoPause": true})

	status, _, _ := call(t, srv, http.MethodPost, "/sandboxes/"+id+"/timeout", map[string]int{"timeout": 10})
	require.Equal(t, http.StatusNoContent, status)
	assert.Equal(t, srv.Now().Add(10*time.Second), srv.EndAt(id), "the TTL is overwritten, shorter too")

	status, _, _ = call(t, srv, http.MethodPost, "/sandboxes/"+id+"/pause", nil)
	require.Equal(t, http.StatusNoContent, status)
	status, _, _ = call(t, srv, http.MethodPost, "/sandboxes/"+id+"/pause", map[string]bool{"memory": true})
	assert.Equal(t, http.StatusConflict, status, "already paused")
	status, _, _ = call(t, srv, http.MethodPost, "/sandboxes/"+id+"/timeout", map[string]int{"timeout": 10})
	assert.Equal(t, http.StatusNotFound, status, "a paused sandbox is not live")
	status, _, _ = call(t, srv, http.MethodPut, "/sandboxes/"+id+"/network", map[string]any{"denyOut": []string{"0.0.0.0/0"}})
	assert.Equal(t, http.StatusNotFound, status, "nor is it for the network")
	status, _, data := call(t, srv, http.MethodGet, "/v2/sandboxes?state=paused", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, string(data), id)

	status, _, _ = call(t, srv, http.MethodPost, "/sandboxes/"+id+"/connect", map[string]int{"timeout": 30})
	assert.Equal(t, http.StatusCreated, status, "a paused sandbox is resumed")
	status, _, _ = call(t, srv, http.MethodPost, "/sandboxes/"+id+"/connect", map[string]int{"timeout": 5})
	assert.Equal(t, http.StatusOK, status, "a running one is only connected")
	assert.Equal(t, srv.Now().Add(30*time.Second), srv.EndAt(id), "connect never shortens the TTL")

	status, _, _ = call(t, srv, http.MethodPut, "/sandboxes/"+id+"/network", map[string]any{"allowOut": []string{"example.com"}})
	assert.Equal(t, http.StatusBadRequest, status, "a domain needs deny-all")
	status, _, _ = call(t, srv, http.MethodPut, "/sandboxes/"+id+"/network", map[string]any{"denyOut": []string{"example.com"}})
	assert.Equal(t, http.StatusBadRequest, status, "deny entries are CIDRs")
	status, _, _ = call(t, srv, http.MethodPut, "/sandboxes/"+id+"/network", map[string]any{"allowOut": []string{"example.com"}, "denyOut": []string{"0.0.0.0/0"}})
	assert.Equal(t, http.StatusNoContent, status)
	status, _, data = call(t, srv, http.MethodGet, "/sandboxes/"+id, nil)
	require.Equal(t, http.StatusOK, status)
	var detail map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &detail))
	assert.JSONEq(t, `{"allowOut":["example.com"],"denyOut":["0.0.0.0/0"]}`, string(detail["network"]), "SandboxDetail carries the network config")
	assert.NotContains(t, detail, "envdAccessToken", "a sandbox that is not secure has no token")

	status, _, _ = call(t, srv, http.MethodGet, "/sandboxes/"+id+"-client", nil)
	assert.Equal(t, http.StatusOK, status, "an <id>-<client> path names the sandbox")
	status, _, _ = call(t, srv, http.MethodGet, "/sandboxes/a-b-c", nil)
	assert.Equal(t, http.StatusBadRequest, status)

	srv.Advance(31 * time.Second)
	assert.Equal(t, "paused", srv.State(id), "autoPause: the TTL pauses it")
	status, _, _ = call(t, srv, http.MethodDelete, "/sandboxes/"+id, nil)
	assert.Equal(t, http.StatusNoContent, status, "a paused sandbox can be killed")
	status, _, data = call(t, srv, http.MethodGet, "/sandboxes/"+id, nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.JSONEq(t, `{"code":404,"message":"Sandbox \"`+id+`\" doesn't exist or you don't have access to it"}`, string(data))
	status, _, _ = call(t, srv, http.MethodDelete, "/sandboxes/"+id, nil)
	assert.Equal(t, http.StatusNotFound, status)

	killed := create(t, srv, map[string]any{"templateID": "base", "timeout": 5})
	srv.Advance(6 * time.Second)
	assert.Equal(t, "", srv.State(killed), "without autoPause the TTL kills it")
}

func TestRateLimitFault(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	srv.Fail("POST /sandboxes", e2btest.RateLimited(3))
	status, header, data := call(t, srv, http.MethodPost, "/sandboxes", map[string]any{"templateID": "base"})
	assert.Equal(t, http.StatusTooManyRequests, status)
	assert.Equal(t, "3", header.Get("Retry-After"))
	assert.JSONEq(t, `{"code":429,"message":"Rate limit exceeded"}`, string(data))
	create(t, srv, map[string]any{"templateID": "base"}) // each fault is used once
}

// What FIDELITY.md names as not offered answers the control plane's 404
// for an unknown route, with E2B's error body.
func TestWhatIsNotOfferedIsNotFound(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	for _, route := range []struct{ method, path string }{
		{http.MethodPost, "/v3/templates"}, {http.MethodGet, "/templates/t1/files/" + strings.Repeat("a", 64)},
		{http.MethodPost, "/v2/templates/t1/builds/b1"}, {http.MethodGet, "/templates/t1/builds/b1/status"},
		{http.MethodGet, "/templates/t1/other"},
	} {
		status, _, data := call(t, srv, route.method, route.path, nil)
		assert.Equal(t, http.StatusNotFound, status, route.path)
		assert.JSONEq(t, `{"code":404,"message":"not found"}`, string(data), route.path)
	}
}
