package e2btest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// contentCall sends one volume content request with a bearer token.
func contentCall(t *testing.T, srv *e2btest.Server, token, method, route string, q url.Values, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL()+route+"?"+q.Encode(), bytes.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, data
}

// Volumes on the control plane (names, ids, tokens) and their content
// service: tokens bound to their volume, the volume service's answers for
// each fault, its default owner and modes, listings by name and depth,
// and paths that never leave the volume, a symbolic link a sandbox made
// included.
func TestVolumes(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	made := func(name string) (id, token string) {
		status, _, data := call(t, srv, http.MethodPost, "/volumes", map[string]string{"name": name})
		require.Equal(t, http.StatusCreated, status, string(data))
		var v map[string]any
		require.NoError(t, json.Unmarshal(data, &v))
		assert.NotContains(t, v, "domain", "E2B's own cluster names no domain")
		return v["volumeID"].(string), v["token"].(string)
	}
	id, token := made("data")
	otherID, otherToken := made("other")

	for _, tc := range []struct {
		name, method, route string
		body                any
		status              int
		message             string
	}{
		{"a name taken", http.MethodPost, "/volumes", map[string]string{"name": "data"}, http.StatusBadRequest, "Volume with name 'data' already exists"},
		{"a bad name", http.MethodPost, "/volumes", map[string]string{"name": "a/b"}, http.StatusBadRequest, "Invalid volume name"},
		{"no name", http.MethodPost, "/volumes", map[string]string{}, http.StatusBadRequest, "Invalid volume name"},
		{"not a UUID", http.MethodGet, "/volumes/nope", nil, http.StatusBadRequest, "Invalid volume ID"},
		{"none such", http.MethodDelete, "/volumes/1b4e28ba-2fa1-11d2-883f-0016d3cca427", nil, http.StatusNotFound, "Volume not found"},
	} {
		status, _, data := call(t, srv, tc.method, tc.route, tc.body)
		assert.Equal(t, tc.status, status, tc.name)
		assert.JSONEq(t, `{"code":`+strconv.Itoa(tc.status)+`,"message":"`+tc.message+`"}`, string(data), tc.name)
	}
	status, _, data := call(t, srv, http.MethodGet, "/volumes", nil)
	require.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `[{"volumeID":"`+id+`","name":"data"},{"volumeID":"`+otherID+`","name":"other"}]`, string(data), "oldest first")

	at := func(p string, more ...string) url.Values {
		q := url.Values{"path": {p}}
		for i := 0; i+1 < len(more); i += 2 {
			q.Set(more[i], more[i+1])
		}
		return q
	}
	files := "/volumecontent/" + id + "/file"
	dirs := "/volumecontent/" + id + "/dir"
	paths := "/volumecontent/" + id + "/path"

	// Tokens: none, not this server's, another volume's.
	status, _ = contentCall(t, srv, "", http.MethodGet, paths, at("/"), nil)
	assert.Equal(t, http.StatusUnauthorized, status)
	status, _ = contentCall(t, srv, token[:len(token)-2]+"xx", http.MethodGet, paths, at("/"), nil)
	assert.Equal(t, http.StatusUnauthorized, status, "a signature not the server's")
	status, _ = contentCall(t, srv, otherToken, http.MethodGet, paths, at("/"), nil)
	assert.Equal(t, http.StatusForbidden, status)

	for _, tc := range []struct {
		name, method, route string
		q                   url.Values
		body                string
		status              int
		code, message       string
	}{
		{"a file with its parents", http.MethodPut, files, at("a/b/c.txt", "force", "true", "mode", "420"), "hello", http.StatusCreated, "", ""},
		{"no overwrite", http.MethodPut, files, at("/a/b/c.txt"), "x", http.StatusConflict, "PATH_ALREADY_EXISTS", "failed to open file for create: open /a/b/c.txt: file exists"},
		{"no parent", http.MethodPut, files, at("/x/y"), "x", http.StatusNotFound, "PATH_NOT_FOUND", "failed to open file for create: open /x/y: no such file or directory"},
		{"a file for a directory", http.MethodPut, files, at("/a/b/c.txt/d"), "x", http.StatusBadRequest, "INVALID_REQUEST", "failed to open file for create: a component of the path is a file, but must be a directory"},
		{"a directory", http.MethodPost, dirs, at("/a/e", "uid", "1000", "gid", "1000", "mode", "448"), "", http.StatusCreated, "", ""},
		{"a directory again", http.MethodPost, dirs, at("/a/e"), "", http.StatusConflict, "PATH_ALREADY_EXISTS", "failed to create directory: mkdir /a/e: file exists"},
		{"forced, it is kept", http.MethodPost, dirs, at("/a/e", "force", "true"), "", http.StatusCreated, "", ""},
		{"a bad uid", http.MethodPost, dirs, at("/a/f", "uid", "-1"), "", http.StatusBadRequest, "INVALID_REQUEST", `invalid uid: "-1"`},
		{"no path", http.MethodGet, paths, url.Values{}, "", http.StatusBadRequest, "INVALID_REQUEST", "query parameter 'path' is required"},
		{"stat none", http.MethodGet, paths, at("nope"), "", http.StatusNotFound, "PATH_NOT_FOUND", `failed to stat: "nope" not found.`},
		{"too deep", http.MethodGet, dirs, at("/", "depth", "11"), "", http.StatusBadRequest, "DEPTH_OUT_OF_RANGE", "depth must be between 1 and 10"},
		{"list none", http.MethodGet, dirs, at("/nope"), "", http.StatusNotFound, "PATH_NOT_FOUND", `failed to read: "/nope" not found.`},
		{"read a directory", http.MethodGet, files, at("/a"), "", http.StatusInternalServerError, "UNKNOWN_USER_ERROR_CODE", "failed to read file: read /a: is a directory"},
		{"chmod none", http.MethodPatch, paths, at("/nope"), `{"mode":384}`, http.StatusNotFound, "PATH_NOT_FOUND", `failed to chmod: "/nope" not found.`},
		{"bad metadata", http.MethodPatch, paths, at("/a"), `{"mode":"x"}`, http.StatusBadRequest, "INVALID_REQUEST", ""},
		{"delete the root", http.MethodDelete, paths, at("/.."), "", http.StatusBadRequest, "CANNOT_DELETE_ROOT", "cannot delete root"},
		{"delete none", http.MethodDelete, paths, at("/nope"), "", http.StatusNotFound, "PATH_NOT_FOUND", `failed to delete: "/nope" not found.`},
	} {
		status, data := contentCall(t, srv, token, tc.method, tc.route, tc.q, []byte(tc.body))
		require.Equal(t, tc.status, status, "%s: %s", tc.name, data)
		if tc.code == "" {
			continue
		}
		var e map[string]string
		require.NoError(t, json.Unmarshal(data, &e), tc.name)
		assert.Equal(t, tc.code, e["code"], tc.name)
		if tc.message != "" {
			assert.Equal(t, tc.message, e["message"], tc.name)
		}
	}

	status, data = contentCall(t, srv, token, http.MethodGet, dirs, at("/", "depth", "3"), nil)
	require.Equal(t, http.StatusOK, status)
	var listing []map[string]any
	require.NoError(t, json.Unmarshal(data, &listing))
	byPath := map[string]map[string]any{}
	var order []string
	for _, e := range listing {
		order = append(order, e["path"].(string))
		byPath[e["path"].(string)] = e
	}
	assert.Equal(t, []string{"/a", "/a/b", "/a/b/c.txt", "/a/e"}, order, "by name, each directory's entries after it")
	assert.Equal(t, map[string]any{"name": "c.txt", "type": "file", "path": "/a/b/c.txt", "size": 5.0, "mode": 420.0, "uid": 9090.0, "gid": 9090.0},
		pick(byPath["/a/b/c.txt"], "name", "type", "path", "size", "mode", "uid", "gid"))
	assert.Equal(t, map[string]any{"type": "directory", "mode": 511.0, "uid": 9090.0}, pick(byPath["/a/b"], "type", "mode", "uid"), "parents made 0777, the file's owner's")
	assert.Equal(t, map[string]any{"mode": 448.0, "uid": 1000.0, "gid": 1000.0}, pick(byPath["/a/e"], "mode", "uid", "gid"), "a forced make kept it")

	status, data = contentCall(t, srv, token, http.MethodPut, files, at("/a/b/c.txt", "force", "true"), []byte("replaced"))
	require.Equal(t, http.StatusCreated, status, string(data))
	status, data = contentCall(t, srv, token, http.MethodGet, files, at("/a/b/c.txt"), nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "replaced", string(data))

	// A sandbox that mounts the volume shares its files, and a link it
	// makes to this machine's files leads nowhere through the service.
	sb := create(t, srv, map[string]any{"templateID": "base", "volumeMounts": []map[string]string{{"name": "data", "path": "/mnt/v"}}})
	if srv.Mapped() {
		script, err := json.Marshal("cat /mnt/v/a/b/c.txt && ln -s /etc/passwd /mnt/v/link && ln -s ../../../../etc /mnt/v/up")
		require.NoError(t, err)
		status, fs := start(t, srv, sb, `{"process":{"cmd":"/bin/sh","args":["-c",`+string(script)+`]}}`,
			http.Header{"Authorization": {"Basic " + b64("root:")}})
		require.Equal(t, http.StatusOK, status)
		assert.Equal(t, "replaced", stdoutOf(t, fs))
		for _, p := range []string{"/link", "/up/passwd"} {
			status, data = contentCall(t, srv, token, http.MethodGet, files, at(p), nil)
			assert.NotEqual(t, http.StatusOK, status, p)
			assert.NotContains(t, string(data), "root:", p)
		}
		status, data = contentCall(t, srv, token, http.MethodGet, paths, at("/link"), nil)
		require.Equal(t, http.StatusOK, status)
		assert.Equal(t, map[string]any{"type": "unknown", "target": "/etc/passwd"}, pick(decodeMap(t, data), "type", "target"))
	}
	status, _, data = call(t, srv, http.MethodGet, "/sandboxes/"+sb, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, string(data), `"volumeMounts":[{"name":"data","path":"/mnt/v"}]`)

	status, _, data = call(t, srv, http.MethodPost, "/sandboxes", map[string]any{"templateID": "base", "volumeMounts": []map[string]string{
		{"name": "data", "path": "/mnt/v"}, {"name": "other", "path": "/mnt/v"}, {"name": "data", "path": "/mnt/../x"}, {"name": "gone", "path": "/y"}, {"name": "data", "path": ""}}})
	require.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid mounts:\n\t- volume mount #1: path '/mnt/v' is already used\n\t- volume mount #2: path must not contain any '.' or '..' components\n"+
		"\t- volume mount #3: volume 'gone' not found\n\t- volume mount #4: path cannot be empty", decodeMap(t, data)["message"])

	status, _, _ = call(t, srv, http.MethodDelete, "/volumes/"+id, nil)
	require.Equal(t, http.StatusNoContent, status)
	status, _, _ = call(t, srv, http.MethodGet, "/volumes/"+id, nil)
	assert.Equal(t, http.StatusNotFound, status)
}

// pick is m with only keys.
func pick(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

func decodeMap(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m), string(data))
	return m
}
