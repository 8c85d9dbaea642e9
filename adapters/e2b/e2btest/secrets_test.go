package e2btest_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// secretIDShape is a secret id: sec_ and a 26-character TypeID suffix.
var secretIDShape = regexp.MustCompile(`^sec_[0-7][0-9a-hjkmnp-tv-z]{25}$`)

// Secrets as E2B's API manages them: canonical lower-case names, sec_ ids
// that are never names, versions, metadata kept or replaced, fixed answers
// that name only the class of a failure, no-store on every answer, and no
// value ever answered or kept in the request log.
func TestSecrets(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	decode := func(data []byte) map[string]any {
		var out map[string]any
		require.NoError(t, json.Unmarshal(data, &out), string(data))
		return out
	}

	status, header, data := call(t, srv, http.MethodPost, "/secrets",
		map[string]any{"name": "OpenAI-Key", "value": "hunter2-value", "metadata": map[string]string{"team": "a"}})
	require.Equal(t, http.StatusCreated, status, string(data))
	assert.Equal(t, "no-store", header.Get("Cache-Control"))
	first := decode(data)
	id, _ := first["secretID"].(string)
	assert.Regexp(t, secretIDShape, id)
	assert.Equal(t, "openai-key", first["name"])
	assert.EqualValues(t, 1, first["currentVersion"])
	assert.Equal(t, map[string]any{"team": "a"}, first["metadata"])
	assert.NotContains(t, string(data), "hunter2")

	invalid := `{"code":400,"message":"Invalid secrets request"}`
	for name, body := range map[string]any{
		"no value":          map[string]any{"name": "x"},
		"no name":           map[string]any{"value": "v"},
		"a space":           map[string]any{"name": "a b", "value": "v"},
		"spaces around":     map[string]any{"name": " a ", "value": "v"},
		"the id prefix":     map[string]any{"name": "SEC_thing", "value": "v"},
		"too long":          map[string]any{"name": strings.Repeat("a", 129), "value": "v"},
		"metadata not text": map[string]any{"name": "m", "value": "v", "metadata": map[string]int{"a": 1}},
	} {
		status, _, data := call(t, srv, http.MethodPost, "/secrets", body)
		assert.Equal(t, http.StatusBadRequest, status, name)
		assert.JSONEq(t, invalid, string(data), name)
	}
	status, _, data = call(t, srv, http.MethodPost, "/secrets", map[string]any{"name": "openai-KEY", "value": "v"})
	assert.Equal(t, http.StatusConflict, status)
	assert.JSONEq(t, `{"code":409,"message":"Secret cannot be modified in its current state"}`, string(data))

	// An update adds a version; omitted metadata is kept, given replaces.
	status, _, data = call(t, srv, http.MethodPost, "/secrets/OPENAI-key", map[string]any{"value": "second-value"})
	require.Equal(t, http.StatusOK, status, string(data))
	second := decode(data)
	assert.EqualValues(t, 2, second["currentVersion"])
	assert.Equal(t, map[string]any{"team": "a"}, second["metadata"])
	status, _, data = call(t, srv, http.MethodPost, "/secrets/"+id, map[string]any{"value": "third", "metadata": map[string]string{}})
	require.Equal(t, http.StatusOK, status, string(data))
	assert.EqualValues(t, 3, decode(data)["currentVersion"])
	assert.Equal(t, map[string]any{}, decode(data)["metadata"])
	assert.Equal(t, first["createdAt"], decode(data)["createdAt"])

	// Get by id or by name; an id is never looked up as a name.
	for _, selector := range []string{id, "openai-key", " OpenAI-Key ", strings.ToUpper(id)} {
		status, _, data := call(t, srv, http.MethodGet, "/secrets/"+strings.ReplaceAll(selector, " ", "%20"), nil)
		assert.Equal(t, http.StatusOK, status, selector)
		assert.Equal(t, id, decode(data)["secretID"], selector)
	}
	for selector, want := range map[string]int{"sec_nope": 400, "sec_00000000000000000000000000": 404, "missing": 404, "a.b": 400} {
		status, _, data := call(t, srv, http.MethodGet, "/secrets/"+selector, nil)
		assert.Equal(t, want, status, selector)
		assert.Equal(t, float64(want), decode(data)["code"], selector)
	}

	// The list pages oldest first, limit 1..100.
	status, _, data = call(t, srv, http.MethodPost, "/secrets", map[string]any{"name": "second", "value": "v"})
	require.Equal(t, http.StatusCreated, status, string(data))
	status, header, data = call(t, srv, http.MethodGet, "/secrets?limit=1", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, string(data), `"name":"openai-key"`)
	next := header.Get("X-Next-Token")
	require.NotEmpty(t, next)
	status, header, data = call(t, srv, http.MethodGet, "/secrets?limit=1&nextToken="+next, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, string(data), `"name":"second"`)
	assert.Empty(t, header.Get("X-Next-Token"))
	for _, q := range []string{"limit=0", "limit=101", "nextToken=bogus"} {
		status, _, _ := call(t, srv, http.MethodGet, "/secrets?"+q, nil)
		assert.Equal(t, http.StatusBadRequest, status, q)
	}

	// Delete: 204, then 404.
	status, _, _ = call(t, srv, http.MethodDelete, "/secrets/openai-key", nil)
	assert.Equal(t, http.StatusNoContent, status)
	status, _, _ = call(t, srv, http.MethodDelete, "/secrets/"+id, nil)
	assert.Equal(t, http.StatusNotFound, status)

	for _, r := range srv.Requests() {
		assert.NotContains(t, r.Body, "value", "a secret route's body is kept out of the log: %s", r.Route)
	}
}
