package e2btest_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Metrics as E2B answers them: a sample per step of the range, the
// sandbox's resources beside what its files hold, a range checked, no
// samples (not 404) for a sandbox that never ran, and a killed sandbox's
// samples kept.
func TestMetrics(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base"})
	status, _, body := envd(t, srv, id, http.MethodPost, "/files?path=/tmp/big", "application/octet-stream",
		[]byte(strings.Repeat("x", 1<<20)), nil)
	require.Equal(t, http.StatusOK, status, string(body))

	metrics := func(path string) []map[string]any {
		t.Helper()
		status, _, data := call(t, srv, http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, status, string(data))
		var out []map[string]any
		require.NoError(t, json.Unmarshal(data, &out), string(data))
		return out
	}
	first := srv.Now()
	// A point is stamped with the start of its step, as E2B's
	// toStartOfInterval does.
	point := func(t time.Time) time.Time { return t.Truncate(5 * time.Second) }
	got := metrics("/sandboxes/" + id + "/metrics")
	require.Len(t, got, 1)
	m := got[0]
	assert.EqualValues(t, point(first).Unix(), m["timestampUnix"])
	assert.Equal(t, point(first).Format(time.RFC3339), m["timestamp"])
	assert.EqualValues(t, 2, m["cpuCount"])
	assert.EqualValues(t, 512<<20, m["memTotal"])
	assert.EqualValues(t, 1024<<20, m["diskTotal"])
	assert.GreaterOrEqual(t, m["diskUsed"].(float64), float64(1<<20), "the sandbox's own files")
	for _, k := range []string{"cpuUsedPct", "memUsed", "memCache"} {
		assert.Contains(t, m, k)
	}

	// A sample per step: each ask five seconds later is a point of its own.
	srv.Advance(5 * time.Second)
	metrics("/sandboxes/" + id + "/metrics")
	srv.Advance(5 * time.Second)
	got = metrics("/sandboxes/" + id + "/metrics")
	require.Len(t, got, 3)
	assert.EqualValues(t, point(first).Unix()+10, got[2]["timestampUnix"])
	sec := strconv.FormatInt(first.Unix()+5, 10)
	got = metrics("/sandboxes/" + id + "/metrics?start=" + sec + "&end=" + sec)
	require.Len(t, got, 1, "the range given")
	assert.EqualValues(t, point(first).Unix()+5, got[0]["timestampUnix"])

	for path, want := range map[string]string{
		"/sandboxes/" + id + "/metrics?start=20&end=10": `{"code":400,"message":"Invalid time range for metrics"}`,
		"/sandboxes/a-b-c/metrics":                      `{"code":400,"message":"Invalid sandbox ID"}`,
	} {
		status, _, data := call(t, srv, http.MethodGet, path, nil)
		assert.Equal(t, http.StatusBadRequest, status, path)
		assert.JSONEq(t, want, string(data), path)
	}
	status, _, _ = call(t, srv, http.MethodGet, "/sandboxes/"+id+"/metrics?start=soon", nil)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Empty(t, metrics("/sandboxes/inever0000000000000000/metrics"), "a sandbox that never ran has no samples")

	// A paused or killed sandbox is not sampled; a killed one keeps its samples.
	status, _, _ = call(t, srv, http.MethodPost, "/sandboxes/"+id+"/pause", nil)
	require.Equal(t, http.StatusNoContent, status)
	srv.Advance(5 * time.Second)
	assert.Len(t, metrics("/sandboxes/"+id+"/metrics"), 3, "paused")
	status, _, _ = call(t, srv, http.MethodDelete, "/sandboxes/"+id, nil)
	require.Equal(t, http.StatusNoContent, status)
	assert.Len(t, metrics("/sandboxes/"+id+"/metrics"), 3, "killed")
}
