package spritestest_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubproc"
	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serviceEvent is a line of a service stream, as sprites-go reads it.
type serviceEvent struct {
	Type      string `json:"type"`
	Data      string `json:"data"`
	ExitCode  *int   `json:"exit_code"`
	Timestamp int64  `json:"timestamp"`
}

// serviceState is a service's state, as sprites-go reads it.
type serviceState struct {
	Name  string `json:"name"`
	Cmd   string `json:"cmd"`
	Needs []string
	State struct {
		Status       string `json:"status"`
		PID          int    `json:"pid"`
		StartedAt    string `json:"started_at"`
		RestartCount int    `json:"restart_count"`
		Error        string `json:"error"`
	} `json:"state"`
}

// streamUntil sends a streaming service request and reads its events
// until one satisfies stop (then leaves) or the stream ends.
func streamUntil(t *testing.T, srv *spritestest.Server, method, path, body string, stop func(serviceEvent) bool) (int, []serviceEvent) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL()+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.Token())
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return res.StatusCode, nil
	}
	assert.Equal(t, "application/x-ndjson", res.Header.Get("Content-Type"))
	var events []serviceEvent
	lines := bufio.NewScanner(res.Body)
	for lines.Scan() {
		var ev serviceEvent
		require.NoError(t, json.Unmarshal(lines.Bytes(), &ev), lines.Text())
		assert.NotZero(t, ev.Timestamp)
		events = append(events, ev)
		if stop != nil && stop(ev) {
			break
		}
	}
	return res.StatusCode, events
}

func getService(t *testing.T, srv *spritestest.Server, name string) serviceState {
	t.Helper()
	status, body, _ := call(t, srv, http.MethodGet, "/v1/sprites/box/services/"+name, "")
	require.Equal(t, http.StatusOK, status, body)
	var st serviceState
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	return st
}

func types(events []serviceEvent) []string {
	var out []string
	for _, ev := range events {
		out = append(out, ev.Type)
	}
	return out
}

// Services as sprites-go drives them: a definition put starts the service
// (after what it needs) and streams its events; the runtime restarts one
// that exits on its own; stop, signal and delete answer as the SDK
// expects; the process runs as sprite in the sprite's files.
func TestServices(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.AddSprite("box")
	base := "/v1/sprites/box/services/"

	status, events := streamUntil(t, srv, http.MethodPut, base+"db?duration=1h",
		`{"cmd":"sh","args":["-c","echo ready; id -un; pwd; exec sleep 600"]}`,
		func(ev serviceEvent) bool {
			return ev.Type == "stdout" && ev.Data != "ready\n" && strings.HasPrefix(ev.Data, "/")
		})
	require.Equal(t, http.StatusOK, status)
	require.NotEmpty(t, events)
	assert.Equal(t, "started", events[0].Type)
	var out []string
	for _, ev := range events[1:] {
		out = append(out, ev.Data)
	}
	if srv.Mapped() && syscall.Geteuid() == 0 {
		assert.Equal(t, []string{"ready\n", "sprite\n", "/home/sprite\n"}, out)
	} else {
		assert.Equal(t, "ready\n", out[0])
	}
	db := getService(t, srv, "db")
	assert.Equal(t, "running", db.State.Status)
	assert.NotZero(t, db.State.PID)
	assert.NotEmpty(t, db.State.StartedAt)

	// What a service needs starts first; a need unknown or circular is refused.
	status, body, _ := call(t, srv, http.MethodPut, base+"app", `{"cmd":"sleep","args":["600"],"needs":["nope"]}`)
	assert.Equal(t, http.StatusBadRequest, status, body)
	status, _, _ = call(t, srv, http.MethodPut, base+"app", `{"args":["600"]}`)
	assert.Equal(t, http.StatusBadRequest, status, "no cmd")
	status, _ = streamUntil(t, srv, http.MethodPut, base+"app?duration=10ms", `{"cmd":"sleep","args":["600"],"needs":["db"],"http_port":8080}`, nil)
	require.Equal(t, http.StatusOK, status)
	status, body, _ = call(t, srv, http.MethodPut, base+"db", `{"cmd":"sleep","args":["1"],"needs":["app"]}`)
	assert.Equal(t, http.StatusBadRequest, status, "a cycle: %s", body)
	status, body, _ = call(t, srv, http.MethodGet, "/v1/sprites/box/services", "")
	require.Equal(t, http.StatusOK, status)
	var all []serviceState
	require.NoError(t, json.Unmarshal([]byte(body), &all))
	require.Len(t, all, 2)
	assert.Equal(t, "app", all[0].Name)
	assert.Equal(t, []string{"db"}, all[0].Needs)
	assert.Contains(t, body, `"http_port":8080`)

	// A service that exits on its own is restarted.
	pid := getService(t, srv, "db").State.PID
	status, _, _ = call(t, srv, http.MethodPost, "/v1/sprites/box/services/signal", `{"name":"db","signal":"SIGTERM"}`)
	require.Equal(t, http.StatusNoContent, status)
	require.Eventually(t, func() bool {
		st := getService(t, srv, "db")
		return st.State.Status == "running" && st.State.RestartCount == 1 && st.State.PID != pid
	}, time.Minute, 20*time.Millisecond, "restarted")
	for body, want := range map[string]int{
		`{"name":"db","signal":"SIGNOPE"}`: http.StatusBadRequest,
		`{"name":"nope","signal":"TERM"}`:  http.StatusNotFound,
	} {
		status, _, _ := call(t, srv, http.MethodPost, "/v1/sprites/box/services/signal", body)
		assert.Equal(t, want, status, body)
	}

	// Stop: the group is ended, the service stays stopped.
	pid = getService(t, srv, "app").State.PID
	status, events = streamUntil(t, srv, http.MethodPost, base+"app/stop?timeout=30s", "", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, []string{"stopping", "exit", "stopped", "complete"}, types(events))
	assert.Equal(t, "stopped", getService(t, srv, "app").State.Status)
	assert.True(t, errors.Is(stubproc.Signal(pid, 0), syscall.ESRCH), "the process is gone")
	status, _, _ = call(t, srv, http.MethodPost, base+"app/stop", "")
	assert.Equal(t, http.StatusConflict, status, "not running")
	status, _, _ = call(t, srv, http.MethodPost, "/v1/sprites/box/services/signal", `{"name":"app","signal":"TERM"}`)
	assert.Equal(t, http.StatusConflict, status, "not running")

	// Delete: not while it runs or is needed.
	status, _, _ = call(t, srv, http.MethodDelete, base+"db", "")
	assert.Equal(t, http.StatusConflict, status, "running")
	status, _, _ = call(t, srv, http.MethodDelete, base+"app", "")
	assert.Equal(t, http.StatusNoContent, status)
	status, _, _ = call(t, srv, http.MethodGet, base+"app", "")
	assert.Equal(t, http.StatusNotFound, status)
	status, _ = streamUntil(t, srv, http.MethodPost, base+"app/start", "", nil)
	assert.Equal(t, http.StatusNotFound, status)

	// Start again after a stop.
	status, _ = streamUntil(t, srv, http.MethodPost, base+"db/stop?timeout=0s", "", nil)
	require.Equal(t, http.StatusOK, status)
	status, events = streamUntil(t, srv, http.MethodPost, base+"db/start?duration=1h", "",
		func(ev serviceEvent) bool { return ev.Type == "stdout" })
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, []string{"started", "stdout"}, types(events))
	assert.Equal(t, "running", getService(t, srv, "db").State.Status)

	// A restore is a cold boot: what ran starts again fresh.
	pid = getService(t, srv, "db").State.PID
	status, body, _ = call(t, srv, http.MethodPost, "/v1/sprites/box/checkpoint", `{"comment":"c"}`)
	require.Equal(t, http.StatusOK, status, body)
	status, body, _ = call(t, srv, http.MethodPost, "/v1/sprites/box/checkpoints/v0/restore", "")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, "complete")
	restarted := getService(t, srv, "db")
	assert.Equal(t, "running", restarted.State.Status)
	assert.NotEqual(t, pid, restarted.State.PID)
	assert.True(t, errors.Is(stubproc.Signal(pid, 0), syscall.ESRCH), "the old process is gone")

	// The services go with their sprite.
	pid = restarted.State.PID
	status, _, _ = call(t, srv, http.MethodDelete, "/v1/sprites/box", "")
	require.Equal(t, http.StatusNoContent, status)
	assert.True(t, errors.Is(stubproc.Signal(pid, 0), syscall.ESRCH), "gone with the sprite")
}

// A service's output is kept: the logs route answers its last lines
// (?lines, default 100) then complete naming the log file, which holds
// every line stamped with its stream in the sprite's files. A restart
// streams the stop, then the start.
func TestServiceLogsAndRestart(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.AddSprite("box")
	// stdout and stderr are two pipes read apart: their lines' order
	// between the two is not the test's to fix.
	threeLines := func() func(serviceEvent) bool {
		n := 0
		return func(ev serviceEvent) bool {
			if ev.Type == "stdout" || ev.Type == "stderr" {
				n++
			}
			return n == 3
		}
	}
	code, _ := streamUntil(t, srv, http.MethodPut, "/v1/sprites/box/services/log", `{"cmd":"sh","args":["-c","echo line1; echo line2; echo line3 >&2; exec sleep 100"]}`,
		threeLines())
	require.Equal(t, http.StatusOK, code)
	logs := func(query string) (int, []serviceEvent, string) {
		t.Helper()
		status, body, _ := call(t, srv, http.MethodGet, "/v1/sprites/box/services/log/logs"+query, "")
		if status != http.StatusOK {
			return status, nil, ""
		}
		var events []serviceEvent
		var files string
		for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
			var ev struct {
				serviceEvent
				LogFiles map[string]string `json:"log_files"`
			}
			require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
			events = append(events, ev.serviceEvent)
			if ev.LogFiles != nil {
				files = ev.LogFiles["output"]
			}
		}
		return status, events, files
	}
	status, events, file := logs("")
	require.Equal(t, http.StatusOK, status)
	require.Len(t, events, 4)
	require.ElementsMatch(t, []serviceEvent{
		{Type: "stdout", Data: "line1\n"}, {Type: "stdout", Data: "line2\n"}, {Type: "stderr", Data: "line3\n"},
	}, withoutTimes(events[:3]))
	require.Equal(t, "complete", events[3].Type)
	require.Equal(t, "/.sprite/logs/services/log.log", file)
	_, events, _ = logs("?lines=1")
	require.Len(t, events, 2, "the last line alone")
	require.Equal(t, "complete", events[1].Type)
	content, ok := srv.File("box", file)
	require.True(t, ok, "the log file is in the sprite's files")
	require.Contains(t, string(content), "[stdout] line1\n")
	require.Contains(t, string(content), "[stderr] line3\n")

	before := getService(t, srv, "log").State.PID
	code, events = streamUntil(t, srv, http.MethodPost, "/v1/sprites/box/services/log/restart?duration=30s", "",
		threeLines())
	require.Equal(t, http.StatusOK, code)
	kinds := types(events)
	require.Equal(t, []string{"stopping", "exit", "stopped", "started"}, kinds[:4], kinds)
	require.NotEqual(t, before, getService(t, srv, "log").State.PID, "a new process")

	for query, want := range map[string]int{"?lines=x": http.StatusBadRequest, "?lines=-1": http.StatusBadRequest, "?duration=x": http.StatusBadRequest} {
		status, _, _ = logs(query)
		require.Equal(t, want, status, query)
	}
	for _, route := range []string{"GET /v1/sprites/box/services/absent/logs", "POST /v1/sprites/box/services/absent/restart"} {
		method, path, _ := strings.Cut(route, " ")
		status, _, _ := call(t, srv, method, path, "")
		require.Equal(t, http.StatusNotFound, status, route)
	}
}

// withoutTimes is events with their timestamps cleared, to compare.
func withoutTimes(events []serviceEvent) []serviceEvent {
	out := make([]serviceEvent, len(events))
	for i, ev := range events {
		ev.Timestamp = 0
		out[i] = ev
	}
	return out
}

// The output a service's logs route keeps is bounded by bytes as well as
// by lines: 6 MB of 50 kB lines leave at most 4 MiB, the newest.
func TestServiceLogsAreBounded(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.AddSprite("box")
	// The stream's end is the last line (or, should a slow reader miss it,
	// its duration: a hang bound, not the verdict).
	code, _ := streamUntil(t, srv, http.MethodPut, "/v1/sprites/box/services/big?duration=30s",
		`{"cmd":"sh","args":["-c","i=0; while [ $i -lt 120 ]; do head -c 49999 /dev/zero | tr '\\0' x; echo; i=$((i+1)); done; echo last; exec sleep 100"]}`,
		func(ev serviceEvent) bool { return ev.Data == "last\n" })
	require.Equal(t, http.StatusOK, code)
	status, body, _ := call(t, srv, http.MethodGet, "/v1/sprites/box/services/big/logs?lines=1000", "")
	require.Equal(t, http.StatusOK, status)
	kept, size := 0, 0
	var last string
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		var ev serviceEvent
		require.NoError(t, json.Unmarshal([]byte(line), &ev))
		if ev.Type == "stdout" {
			kept++
			size += len(ev.Data)
			last = ev.Data
		}
	}
	require.LessOrEqual(t, size, 4<<20)
	require.Greater(t, size, 3<<20, "the newest lines up to the bound")
	require.Less(t, kept, 121)
	require.Equal(t, "last\n", last)
}
