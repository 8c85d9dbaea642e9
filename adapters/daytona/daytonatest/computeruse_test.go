package daytonatest_test

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Computer use as the daemon serves it in a sandbox without a desktop:
// every plugin route answers the plugin's 503; recordings are the
// daemon's own, read from ~/.daytona/recordings (a file the daemon did
// not name gets an id from its path), downloaded with ranges, deleted;
// starting one without ffmpeg is the daemon's 400, checked before the
// label.
func TestComputerUse(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	tb := create(t, srv, "desk")
	for _, route := range []struct{ method, path string }{
		{http.MethodGet, "/computeruse/status"}, {http.MethodPost, "/computeruse/start"},
		{http.MethodGet, "/computeruse/screenshot"}, {http.MethodPost, "/computeruse/mouse/click"},
		{http.MethodPost, "/computeruse/keyboard/type"}, {http.MethodGet, "/computeruse/display/windows"},
		{http.MethodGet, "/computeruse/process/xvfb/logs"}, {http.MethodPost, "/computeruse/a11y/node/value"},
	} {
		status, _, data := call(t, srv, route.method, tb+route.path, map[string]any{})
		require.Equal(t, http.StatusServiceUnavailable, status, route.path)
		assert.JSONEq(t, `{"message":"Computer-use functionality is not available",
			"details":"The computer-use plugin is still loading or failed to initialize.",
			"solution":"Retry shortly. If the problem persists, check the daemon logs for specific error details."}`, string(data), route.path)
	}

	status, _, data := call(t, srv, http.MethodGet, tb+"/computeruse/recordings", nil)
	require.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"recordings":[]}`, string(data), "none yet, and no directory")

	upload(t, srv, tb, "/home/daytona/.daytona/recordings/0b5e3a52-2d8e-4a43-9c55-3cd8c3f1c2a1_demo_20261204_101010.mp4", "0123456789")
	upload(t, srv, tb, "/home/daytona/.daytona/recordings/old.mp4", "old")
	upload(t, srv, tb, "/home/daytona/.daytona/recordings/notes.txt", "not a recording")
	status, _, data = call(t, srv, http.MethodGet, tb+"/computeruse/recordings", nil)
	require.Equal(t, http.StatusOK, status)
	var list struct {
		Recordings []map[string]any `json:"recordings"`
	}
	require.NoError(t, json.Unmarshal(data, &list))
	require.Len(t, list.Recordings, 2, string(data))
	named, old := list.Recordings[0], list.Recordings[1]
	assert.Equal(t, "0b5e3a52-2d8e-4a43-9c55-3cd8c3f1c2a1", named["id"])
	assert.Equal(t, "/home/daytona/.daytona/recordings/0b5e3a52-2d8e-4a43-9c55-3cd8c3f1c2a1_demo_20261204_101010.mp4", named["filePath"])
	assert.Equal(t, "completed", named["status"])
	assert.EqualValues(t, 10, named["sizeBytes"])
	assert.Equal(t, named["startTime"], named["endTime"], "both the file's time")
	assert.Equal(t, "3b9cef71-6554-590e-9c7b-0e4141b1dda3", old["id"], "uuid v5 of its path in the URL namespace")

	status, h, data := call(t, srv, http.MethodGet, tb+"/computeruse/recordings/0b5e3a52-2d8e-4a43-9c55-3cd8c3f1c2a1/download", nil, "Range", "bytes=2-4")
	require.Equal(t, http.StatusPartialContent, status)
	assert.Equal(t, "234", string(data))
	assert.Equal(t, "video/mp4", h.Get("Content-Type"))

	for _, tc := range []struct {
		method, path string
		body         any
		status       int
		want         string
	}{
		{http.MethodGet, "/computeruse/recordings/nope", nil, http.StatusNotFound, `{"error":"recording not found"}`},
		{http.MethodGet, "/computeruse/recordings/nope/download", nil, http.StatusNotFound, `{"error":"recording not found"}`},
		{http.MethodDelete, "/computeruse/recordings/nope", nil, http.StatusNotFound, `{"error":"recording not found"}`},
		{http.MethodPost, "/computeruse/recordings/stop", map[string]any{}, http.StatusBadRequest, `{"error":"invalid request: id is required"}`},
		{http.MethodPost, "/computeruse/recordings/stop", map[string]any{"id": "nope"}, http.StatusNotFound, `{"error":"recording not found"}`},
	} {
		status, _, data := call(t, srv, tc.method, tb+tc.path, tc.body)
		require.Equal(t, tc.status, status, "%s %s", tc.method, tc.path)
		assert.JSONEq(t, tc.want, string(data), "%s %s", tc.method, tc.path)
	}
	status, _, data = call(t, srv, http.MethodGet, tb+"/computeruse/recordings/"+old["id"].(string), nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "old.mp4", decode(t, data)["fileName"])
	status, _, _ = call(t, srv, http.MethodDelete, tb+"/computeruse/recordings/"+old["id"].(string), nil)
	require.Equal(t, http.StatusNoContent, status)
	status, _, _ = call(t, srv, http.MethodGet, tb+"/computeruse/recordings/"+old["id"].(string), nil)
	assert.Equal(t, http.StatusNotFound, status, "its file is gone")

	if _, err := exec.LookPath("ffmpeg"); err == nil {
		// ffmpeg is here: it starts, finds no display, and the recording
		// it ends by itself is failed and no longer active.
		status, _, data = call(t, srv, http.MethodPost, tb+"/computeruse/recordings/start", map[string]any{"label": "run 1"})
		require.Equal(t, http.StatusCreated, status, string(data))
		rec := decode(t, data)
		assert.Equal(t, "recording", rec["status"])
		assert.True(t, strings.HasPrefix(rec["fileName"].(string), rec["id"].(string)+"_run 1_"), rec["fileName"])
		require.Eventually(t, func() bool {
			status, _, _ := call(t, srv, http.MethodPost, tb+"/computeruse/recordings/stop", map[string]any{"id": rec["id"]})
			return status == http.StatusNotFound
		}, time.Minute, 50*time.Millisecond)
		return
	}
	for _, label := range []any{"fine", "../bad", nil} {
		status, _, data = call(t, srv, http.MethodPost, tb+"/computeruse/recordings/start", map[string]any{"label": label})
		require.Equal(t, http.StatusBadRequest, status)
		assert.JSONEq(t, `{"error":"ffmpeg_not_found","message":"FFmpeg must be installed and available in PATH to use screen recording"}`, string(data), "label %v", label)
	}
}
