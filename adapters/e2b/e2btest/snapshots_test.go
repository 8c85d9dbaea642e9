package e2btest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFile puts data at path in sandbox id through envd's /files.
func writeFile(t *testing.T, srv *e2btest.Server, id, path, data string) {
	t.Helper()
	status, _, body := envd(t, srv, id, http.MethodPost, "/files?path="+url.QueryEscape(path), "application/octet-stream", []byte(data), nil)
	require.Equal(t, http.StatusOK, status, string(body))
}

// readFile is what path holds in sandbox id.
func readFile(t *testing.T, srv *e2btest.Server, id, path string) string {
	t.Helper()
	status, _, body := envd(t, srv, id, http.MethodGet, "/files?path="+url.QueryEscape(path), "", nil, nil)
	require.Equal(t, http.StatusOK, status, string(body))
	return string(body)
}

// Snapshots as E2B's API makes, names, lists and deletes them: a build of
// a template per snapshot, named in the team's namespace and tagged, a
// sandbox made from one holding the files of that moment.
func TestSnapshots(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base"})
	writeFile(t, srv, id, "/home/user/notes.txt", "kept")
	snapshot := func(body any) (int, map[string]any) {
		t.Helper()
		status, _, data := call(t, srv, http.MethodPost, "/sandboxes/"+id+"/snapshots", body)
		var out map[string]any
		require.NoError(t, json.Unmarshal(data, &out), string(data))
		return status, out
	}

	status, unnamed := snapshot(map[string]any{})
	require.Equal(t, http.StatusCreated, status, unnamed)
	assert.Regexp(t, `^[a-z0-9]{20}:default$`, unnamed["snapshotID"])
	assert.Equal(t, []any{}, unnamed["names"])
	status, named := snapshot(map[string]any{"name": " My-Snap "})
	require.Equal(t, http.StatusCreated, status, named)
	assert.Equal(t, map[string]any{"snapshotID": "e2btest/my-snap:default", "names": []any{"e2btest/my-snap"}}, named)
	writeFile(t, srv, id, "/home/user/notes.txt", "changed")
	status, tagged := snapshot(map[string]any{"name": "e2btest/my-snap:v2"})
	require.Equal(t, http.StatusCreated, status, tagged)
	assert.Equal(t, "e2btest/my-snap:v2", tagged["snapshotID"])

	for body, want := range map[string]string{
		`{"name":"other/x"}`:  "namespace 'other' must match your team 'e2btest'",
		`{"name":"bad name"}`: "Invalid name: invalid template ID: bad name",
		`{"name":"x:b@d"}`:    "Invalid name: invalid tag: b@d",
	} {
		var req map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &req))
		status, out := snapshot(req)
		assert.Equal(t, http.StatusBadRequest, status, body)
		assert.Equal(t, want, out["message"], body)
	}
	status, _, _ = call(t, srv, http.MethodPost, "/sandboxes/inope/snapshots", map[string]any{})
	assert.Equal(t, http.StatusNotFound, status)

	// A sandbox made from a build holds the files of its moment.
	from := func(template string) string {
		t.Helper()
		return readFile(t, srv, create(t, srv, map[string]any{"templateID": template}), "/home/user/notes.txt")
	}
	assert.Equal(t, "kept", from("e2btest/my-snap"))
	assert.Equal(t, "kept", from("my-snap:default"))
	assert.Equal(t, "changed", from("my-snap:v2"))
	assert.Equal(t, "kept", from(unnamed["snapshotID"].(string)))
	status, _, data := call(t, srv, http.MethodPost, "/sandboxes", map[string]any{"templateID": "my-snap:nope"})
	assert.Equal(t, http.StatusNotFound, status)
	assert.JSONEq(t, `{"code":404,"message":"tag 'nope' does not exist for template 'my-snap'"}`, string(data))

	// The list: newest first, by sandbox, by name with or without a tag, paged.
	list := func(query string) ([]string, string) {
		t.Helper()
		status, header, data := call(t, srv, http.MethodGet, "/snapshots?"+query, nil)
		require.Equal(t, http.StatusOK, status, string(data))
		var out []map[string]any
		require.NoError(t, json.Unmarshal(data, &out))
		ids := []string{}
		for _, s := range out {
			ids = append(ids, s["snapshotID"].(string))
		}
		return ids, header.Get("X-Next-Token")
	}
	all, _ := list("")
	assert.Equal(t, []string{"e2btest/my-snap:v2", "e2btest/my-snap:default", unnamed["snapshotID"].(string)}, all)
	got, _ := list("sandboxID=" + id)
	assert.Equal(t, all, got)
	got, _ = list("sandboxID=inope")
	assert.Empty(t, got)
	got, _ = list("name=my-snap")
	assert.Equal(t, all[:2], got)
	got, _ = list("name=e2btest/my-snap:default")
	assert.Equal(t, all[1:2], got)
	got, _ = list("name=nope")
	assert.Empty(t, got)
	got, next := list("limit=2")
	assert.Equal(t, all[:2], got)
	got, last := list("limit=2&nextToken=" + next)
	assert.Equal(t, all[2:], got)
	assert.Empty(t, last)
	for _, q := range []string{"limit=0", "nextToken=bogus!", "sandboxID=a-b-c", "name=other/x"} {
		status, _, _ := call(t, srv, http.MethodGet, "/snapshots?"+q, nil)
		assert.Equal(t, http.StatusBadRequest, status, q)
	}

	// Delete takes the whole template; what was made from it stays.
	made := create(t, srv, map[string]any{"templateID": "my-snap"})
	status, _, _ = call(t, srv, http.MethodDelete, "/templates/"+url.PathEscape("e2btest/my-snap:default"), nil)
	assert.Equal(t, http.StatusNoContent, status)
	status, _, data = call(t, srv, http.MethodDelete, "/templates/my-snap", nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.JSONEq(t, `{"code":404,"message":"template 'my-snap' not found"}`, string(data))
	got, _ = list("")
	assert.Equal(t, all[2:], got)
	assert.Equal(t, "kept", readFile(t, srv, made, "/home/user/notes.txt"))
	status, _, _ = call(t, srv, http.MethodDelete, "/templates/base", nil)
	assert.Equal(t, http.StatusForbidden, status)
}

// A fork is count new sandboxes holding the original's files, template,
// metadata and environment, the original running on; the API's checks
// come first.
func TestFork(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base", "metadata": map[string]string{"paddock_name": "orig"}})
	writeFile(t, srv, id, "/home/user/state.txt", "mid-task")

	status, _, data := call(t, srv, http.MethodPost, "/sandboxes/"+id+"/fork", map[string]any{"count": 2, "timeout": 60})
	require.Equal(t, http.StatusCreated, status, string(data))
	var results []map[string]map[string]any
	require.NoError(t, json.Unmarshal(data, &results))
	require.Len(t, results, 2)
	for _, r := range results {
		fork, _ := r["sandbox"]["sandboxID"].(string)
		require.NotEmpty(t, fork, r)
		assert.NotEqual(t, id, fork)
		assert.Equal(t, "mid-task", readFile(t, srv, fork, "/home/user/state.txt"))
		status, _, data := call(t, srv, http.MethodGet, "/sandboxes/"+fork, nil)
		require.Equal(t, http.StatusOK, status)
		assert.Contains(t, string(data), `"paddock_name":"orig"`)
		assert.Equal(t, srv.Now().Add(60e9), srv.EndAt(fork))
	}
	assert.Equal(t, "running", srv.State(id), "the original runs on")
	status, _, data = call(t, srv, http.MethodPost, "/sandboxes/"+id+"/fork", nil)
	require.Equal(t, http.StatusCreated, status, "no body: one fork")
	require.NoError(t, json.Unmarshal(data, &results))
	assert.Len(t, results, 1)

	for body, want := range map[string]string{
		`{"count":0}`:   "Count must be at least 1",
		`{"count":101}`: "Count cannot be greater than 100",
		`{"count":20}`:  "Count must be lower than the maximum number of concurrent sandboxes (20)",
		`{"timeout":0}`: "Timeout must be greater than 0",
	} {
		var req map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &req))
		status, _, data := call(t, srv, http.MethodPost, "/sandboxes/"+id+"/fork", req)
		assert.Equal(t, http.StatusBadRequest, status, body)
		assert.Contains(t, string(data), want, body)
	}
	status, _, _ = call(t, srv, http.MethodPost, "/sandboxes/inope/fork", nil)
	assert.Equal(t, http.StatusNotFound, status)
	status, _, _ = call(t, srv, http.MethodPost, "/sandboxes/"+id+"/pause", nil)
	require.Equal(t, http.StatusNoContent, status)
	status, _, data = call(t, srv, http.MethodPost, "/sandboxes/"+id+"/fork", nil)
	assert.Equal(t, http.StatusConflict, status)
	assert.JSONEq(t, `{"code":409,"message":"Sandbox '`+id+`' is paused and cannot be forked; resume it first"}`, string(data))
}
