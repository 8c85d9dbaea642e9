package daytonatest_test

import (
	"net/http"
	"testing"

	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Volumes as the control plane keeps them, and mounted as sandboxes see
// them: named and unique, pending then ready, mounted by id or name at a
// path the control plane allows, shared by the sandboxes mounting them,
// not deleted while one uses them.
func TestVolumes(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	status, _, data := call(t, srv, http.MethodPost, "/api/volumes", map[string]any{"name": "data"})
	require.Equal(t, http.StatusOK, status, string(data))
	made := decode(t, data)
	assert.Equal(t, "pending_create", made["state"])
	id := made["id"].(string)
	status, _, data = call(t, srv, http.MethodGet, "/api/volumes/"+id, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "ready", decode(t, data)["state"])
	status, _, data = call(t, srv, http.MethodGet, "/api/volumes/by-name/data", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, id, decode(t, data)["id"])
	status, _, data = call(t, srv, http.MethodPost, "/api/volumes", map[string]any{"name": "data"})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "Volume with name data already exists", decode(t, data)["message"])
	status, _, data = call(t, srv, http.MethodGet, "/api/volumes/by-name/nope", nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "Volume with name nope not found", decode(t, data)["message"])

	for mountPath, want := range map[string]string{
		"relative":  "Invalid mount path relative (must be absolute)",
		"/":         "Invalid mount path / (cannot mount to the root directory)",
		"/a/../b":   "Invalid mount path /a/../b (cannot contain relative path components)",
		"/a//b":     "Invalid mount path /a//b (cannot contain consecutive slashes)",
		"/etc/data": "Invalid mount path /etc/data (cannot mount to system directory)",
	} {
		status, _, data := call(t, srv, http.MethodPost, "/api/sandbox", map[string]any{
			"volumes": []map[string]string{{"volumeId": "data", "mountPath": mountPath}}})
		assert.Equal(t, http.StatusBadRequest, status, mountPath)
		assert.Equal(t, want, decode(t, data)["message"], mountPath)
	}
	status, _, data = call(t, srv, http.MethodPost, "/api/sandbox", map[string]any{
		"volumes": []map[string]string{{"volumeId": "data", "mountPath": "/mnt/v", "subpath": "/abs"}}})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, `Invalid subpath "/abs" (S3 key prefixes cannot start with /)`, decode(t, data)["message"])
	status, _, data = call(t, srv, http.MethodPost, "/api/sandbox", map[string]any{
		"volumes": []map[string]string{{"volumeId": "nope", "mountPath": "/mnt/v"}}})
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "Volume 'nope' not found", decode(t, data)["message"])

	// Two sandboxes share what one writes, by name and by id.
	status, _, data = call(t, srv, http.MethodPost, "/api/sandbox", map[string]any{"name": "a",
		"volumes": []map[string]string{{"volumeId": "data", "mountPath": "/home/daytona/data"}}})
	require.Equal(t, http.StatusOK, status, string(data))
	a := decode(t, data)
	assert.Equal(t, []any{map[string]any{"volumeId": id, "mountPath": "/home/daytona/data"}}, a["volumes"])
	status, _, data = call(t, srv, http.MethodPost, "/api/sandbox", map[string]any{"name": "b",
		"volumes": []map[string]string{{"volumeId": id, "mountPath": "/mnt/shared"}}})
	require.Equal(t, http.StatusOK, status, string(data))
	b := decode(t, data)
	if srv.Mapped() {
		execute(t, srv, "/toolbox/"+a["id"].(string), "echo shared > /home/daytona/data/note")
		assert.Equal(t, "shared\n", execute(t, srv, "/toolbox/"+b["id"].(string), "cat /mnt/shared/note"))
	}

	status, _, data = call(t, srv, http.MethodDelete, "/api/volumes/"+id, nil)
	assert.Equal(t, http.StatusConflict, status)
	assert.Contains(t, decode(t, data)["message"], "Volume cannot be deleted because it is in use by one or more sandboxes (e.g. ")
	for _, name := range []string{"a", "b"} {
		status, _, _ = call(t, srv, http.MethodDelete, "/api/sandbox/"+name, nil)
		require.Equal(t, http.StatusOK, status)
	}
	status, _, _ = call(t, srv, http.MethodDelete, "/api/volumes/"+id, nil)
	assert.Equal(t, http.StatusOK, status)
	status, _, data = call(t, srv, http.MethodGet, "/api/volumes/"+id, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "deleted", decode(t, data)["state"])
	status, _, data = call(t, srv, http.MethodGet, "/api/volumes", nil)
	require.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `[]`, string(data))
	status, _, data = call(t, srv, http.MethodGet, "/api/volumes?includeDeleted=true", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, string(data), id)
	status, _, _ = call(t, srv, http.MethodGet, "/api/volumes/00000000-0000-4000-8000-000000000000", nil)
	assert.Equal(t, http.StatusNotFound, status)
}
