package daytonatest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// execute runs command through a sandbox's toolbox and answers its output.
func execute(t *testing.T, srv *daytonatest.Server, toolbox, command string) string {
	t.Helper()
	status, _, data := call(t, srv, http.MethodPost, toolbox+"/process/execute", map[string]any{"command": command})
	require.Equal(t, http.StatusOK, status, string(data))
	var out struct {
		Result string `json:"result"`
	}
	require.NoError(t, json.Unmarshal(data, &out))
	return out.Result
}

// Snapshots as the control plane keeps them: one from an image is pending,
// then active; one from a sandbox holds its files, and sandboxes made from
// it start with them; names are checked and unique, the list pages newest
// first with the general snapshots last, a delete removes, deactivation
// takes ten minutes to be undone, a general snapshot is not the
// organization's to delete.
func TestSnapshots(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	snapshot := func(method, path string, body any) (int, map[string]any) {
		t.Helper()
		status, _, data := call(t, srv, method, path, body)
		if len(data) == 0 {
			return status, nil
		}
		return status, decode(t, data)
	}

	status, made := snapshot(http.MethodPost, "/api/snapshots", map[string]any{"name": "py", "imageName": "python:3.12-slim", "entrypoint": []string{"sleep", "", "infinity"}})
	require.Equal(t, http.StatusOK, status, made)
	assert.Equal(t, "pending", made["state"])
	assert.Equal(t, []any{"sleep", "infinity"}, made["entrypoint"])
	id := made["id"].(string)
	status, got := snapshot(http.MethodGet, "/api/snapshots/py", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "active", got["state"])
	assert.Equal(t, id, got["id"])
	for body, want := range map[string]string{
		`{"name":"x","imageName":"ubuntu"}`:            "Image name must include a tag (e.g., ubuntu:22.04) or digest (@sha256:...)",
		`{"name":"x","imageName":"ubuntu:latest"}`:     `Images with tag ":latest" are not allowed`,
		`{"name":"x","imageName":"ubuntu@sha256:abc"}`: "Invalid digest format. Must be image@sha256:64_hex_characters",
		`{"name":"x y","imageName":"ubuntu:22.04"}`:    "Invalid snapshot name format. May contain letters, digits, dots, colons, and dashes",
		`{"name":"x"}`: "Must specify an image name when not using a build info entry",
		`{"name":"x","imageName":"u:1","buildInfo":{"contextHashes":[]}}`: "Cannot specify an image name when using a build info entry",
	} {
		status, out := snapshot(http.MethodPost, "/api/snapshots", json.RawMessage(body))
		assert.Equal(t, http.StatusBadRequest, status, body)
		assert.Equal(t, want, out["message"], body)
	}
	status, out := snapshot(http.MethodPost, "/api/snapshots", map[string]any{"name": "py", "imageName": "python:3.13"})
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, `Snapshot with name "py" already exists for this organization`, out["message"])

	// A sandbox's snapshot holds its files.
	tb := create(t, srv, "box")
	execute(t, srv, tb, "echo kept > /home/daytona/notes.txt")
	status, sb := snapshot(http.MethodPost, "/api/sandbox/box/snapshot", map[string]any{"name": "with-notes"})
	require.Equal(t, http.StatusOK, status, sb)
	assert.Equal(t, "snapshotting", sb["state"])
	assert.Equal(t, "started", srv.State("box"), "back in its state")
	execute(t, srv, tb, "echo changed > /home/daytona/notes.txt")
	status, _, data := call(t, srv, http.MethodPost, "/api/sandbox", map[string]any{"name": "copy", "snapshot": "with-notes"})
	require.Equal(t, http.StatusOK, status, string(data))
	copyID := decode(t, data)["id"].(string)
	assert.Equal(t, "kept\n", execute(t, srv, "/toolbox/"+copyID, "cat /home/daytona/notes.txt"))
	status, out = snapshot(http.MethodPost, "/api/sandbox/box/snapshot", map[string]any{"name": "with-notes"})
	assert.Equal(t, http.StatusConflict, status, out)
	status, out = snapshot(http.MethodPost, "/api/sandbox/box/snapshot", map[string]any{"name": "m", "includeMemory": true})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "includeMemory is only supported for Windows sandboxes", out["message"])

	// The list: the organization's newest first, the general ones last.
	status, list := snapshot(http.MethodGet, "/api/snapshots?limit=2", nil)
	require.Equal(t, http.StatusOK, status)
	names := func(l map[string]any) []string {
		var out []string
		for _, it := range l["items"].([]any) {
			out = append(out, it.(map[string]any)["name"].(string))
		}
		return out
	}
	assert.Equal(t, []string{"with-notes", "py"}, names(list))
	assert.EqualValues(t, 4, list["total"], "two of the organization's and the two built in")
	assert.EqualValues(t, 2, list["totalPages"])
	status, list = snapshot(http.MethodGet, "/api/snapshots?page=2&limit=2", nil)
	require.Equal(t, http.StatusOK, status)
	assert.ElementsMatch(t, []string{"default", "paddock-test"}, names(list), "made at once: their order is the database's")
	status, list = snapshot(http.MethodGet, "/api/snapshots?name=NOTES", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, []string{"with-notes"}, names(list))

	// Deactivate, activate, delete.
	status, _ = snapshot(http.MethodPost, "/api/snapshots/"+id+"/deactivate", nil)
	require.Equal(t, http.StatusOK, status)
	status, _, data = call(t, srv, http.MethodPost, "/api/sandbox", map[string]any{"snapshot": "py"})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "Snapshot py is inactive", decode(t, data)["message"])
	status, out = snapshot(http.MethodPost, "/api/snapshots/"+id+"/activate", nil)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "Snapshot deactivation is still in progress. Please try again in a few minutes.", out["message"])
	status, out = snapshot(http.MethodDelete, "/api/snapshots/py", nil)
	assert.Equal(t, http.StatusBadRequest, status, "by id only")
	assert.Equal(t, "Validation failed (uuid is expected)", out["message"])
	status, _ = snapshot(http.MethodDelete, "/api/snapshots/"+id, nil)
	assert.Equal(t, http.StatusOK, status)
	status, _ = snapshot(http.MethodGet, "/api/snapshots/py", nil)
	assert.Equal(t, http.StatusNotFound, status)
	status, got = snapshot(http.MethodGet, "/api/snapshots/default", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, true, got["general"])
	status, out = snapshot(http.MethodDelete, "/api/snapshots/"+got["id"].(string), nil)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, "You cannot delete a general snapshot", out["message"])
	assert.True(t, strings.HasPrefix(got["imageName"].(string), "daytonaio/sandbox:"))
}
