package daytonatest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// call sends one request with the server's key.
func call(t *testing.T, srv *daytonatest.Server, method, path string, body any, header ...string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, srv.URL()+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.Key())
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header, data
}

// create makes a started sandbox and answers its toolbox path.
func create(t *testing.T, srv *daytonatest.Server, name string) string {
	t.Helper()
	status, _, data := call(t, srv, http.MethodPost, "/api/sandbox", map[string]any{"name": name})
	require.Equal(t, http.StatusOK, status, string(data))
	var sb struct {
		ID      string `json:"id"`
		Toolbox string `json:"toolboxProxyUrl"`
	}
	require.NoError(t, json.Unmarshal(data, &sb))
	require.Equal(t, srv.URL()+"/toolbox", sb.Toolbox)
	return "/toolbox/" + sb.ID
}

// upload puts content at sandbox path p through the toolbox's multipart
// upload.
func upload(t *testing.T, srv *daytonatest.Server, tb, p, content string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	part, err := mw.CreateFormFile("file", path.Base(p))
	require.NoError(t, err)
	_, _ = part.Write([]byte(content))
	require.NoError(t, mw.Close())
	status, _, data := call(t, srv, http.MethodPost, tb+"/files/upload?path="+url.QueryEscape(p), buf.Bytes(), "Content-Type", mw.FormDataContentType())
	require.Equal(t, http.StatusOK, status, string(data))
}

// The execute route: combined output in order, the real exit code, envs
// (not env), a timeout that kills and answers 408, validation.
func TestExecute(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	tb := create(t, srv, "box")
	status, _, data := call(t, srv, http.MethodPost, tb+"/process/execute", map[string]any{
		"command": `echo o1; echo e1 >&2; echo "$A$B"; exit 3`, "envs": map[string]string{"A": "x"}, "env": map[string]string{"B": "ignored"}})
	require.Equal(t, http.StatusOK, status, string(data))
	assert.JSONEq(t, `{"exitCode":3,"result":"o1\ne1\nx\n"}`, string(data))
	status, _, data = call(t, srv, http.MethodPost, tb+"/process/execute", map[string]any{"command": "sleep 5; echo late", "timeout": 1})
	assert.Equal(t, http.StatusRequestTimeout, status)
	assert.Contains(t, string(data), `"REQUEST_TIMEOUT"`)
	status, _, _ = call(t, srv, http.MethodPost, tb+"/process/execute", map[string]any{"command": "  "})
	assert.Equal(t, http.StatusBadRequest, status)
	status, _, data = call(t, srv, http.MethodPost, tb+"/process/execute", map[string]any{"command": "pwd", "cwd": "/nope"})
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, string(data), `"exitCode":-1`)
	status, _, _ = call(t, srv, http.MethodPost, "/toolbox/not-a-sandbox/process/execute", map[string]any{"command": "true"})
	assert.Equal(t, http.StatusBadGateway, status)
}

// A session command: 202 with its id, a journal of labelled lines (NUL
// dropped, a last line given its newline), the exit code once the journal
// is whole, input echoed unless suppressed, 410 after an observed exit,
// the log views by header, and a follow that ends in a normal close.
func TestSessionCommand(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t, daytonatest.WithFollowIdle(2), daytonatest.WithFrameSize(5))
	tb := create(t, srv, "box")
	status, _, _ := call(t, srv, http.MethodPost, tb+"/process/session", map[string]string{"sessionId": "s1"})
	require.Equal(t, http.StatusCreated, status)
	status, _, _ = call(t, srv, http.MethodPost, tb+"/process/session", map[string]string{"sessionId": "s1"})
	assert.Equal(t, http.StatusConflict, status)
	status, _, data := call(t, srv, http.MethodPost, tb+"/process/session/s1/exec",
		map[string]any{"command": `read x; echo "got:$x"; printf 'a\000b\n'; echo err >&2; printf partial`, "runAsync": true})
	require.Equal(t, http.StatusAccepted, status, string(data))
	var exec struct {
		CmdID string `json:"cmdId"`
	}
	require.NoError(t, json.Unmarshal(data, &exec))
	cmd := tb + "/process/session/s1/command/" + exec.CmdID
	status, _, _ = call(t, srv, http.MethodPost, cmd+"/input", map[string]string{"data": ""})
	assert.Equal(t, http.StatusBadRequest, status, "an empty write is refused")
	status, _, _ = call(t, srv, http.MethodPost, cmd+"/input", map[string]string{"data": "hi"})
	require.Equal(t, http.StatusNoContent, status)

	ws := "ws" + strings.TrimPrefix(srv.URL(), "http") + cmd + "/logs?follow=true"
	conn, res, err := websocket.DefaultDialer.Dial(ws, http.Header{"Authorization": {"Bearer " + srv.Key()}, "X-Daytona-Split-Output": {"true"}})
	require.NoError(t, err)
	res.Body.Close()
	var followed []byte
	for {
		kind, msg, err := conn.ReadMessage()
		if err != nil {
			assert.True(t, websocket.IsCloseError(err, websocket.CloseNormalClosure), "%v", err)
			break
		}
		assert.Equal(t, websocket.BinaryMessage, kind)
		assert.LessOrEqual(t, len(msg), 5)
		followed = append(followed, msg...)
	}
	conn.Close()
	status, _, data = call(t, srv, http.MethodGet, cmd, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, string(data), `"exitCode":0`, "the exit code exists once the follow closed")

	_, h, raw := call(t, srv, http.MethodGet, cmd+"/logs", nil, "X-Daytona-Split-Output", "true")
	assert.Equal(t, "text/plain; charset=utf-8", h.Get("Content-Type"))
	assert.Equal(t, raw, followed, "the follow delivered the journal, byte for byte")
	assert.Contains(t, string(raw), "\x01\x01\x01hi\n", "the input is echoed under the stdout marker")
	assert.Contains(t, string(raw), "\x01\x01\x01got:hi\n")
	assert.Contains(t, string(raw), "\x01\x01\x01ab\n", "NUL dropped")
	assert.Contains(t, string(raw), "\x02\x02\x02err\n")
	assert.Contains(t, string(raw), "\x01\x01\x01partial\n", "the last line gets its newline (stdout and stderr lines race, so it need not be last)")
	_, _, stripped := call(t, srv, http.MethodGet, cmd+"/logs", nil)
	assert.NotContains(t, string(stripped), "\x01")
	_, h, js := call(t, srv, http.MethodGet, cmd+"/logs", nil, "X-Daytona-SDK-Version", "0.190.0")
	assert.Equal(t, "application/json; charset=utf-8", h.Get("Content-Type"))
	assert.Contains(t, string(js), `"stderr":"err\n"`)

	status, _, _ = call(t, srv, http.MethodPost, cmd+"/input", map[string]string{"data": "more"})
	assert.Equal(t, http.StatusGone, status, "the exit code was observed")
	status, _, _ = call(t, srv, http.MethodDelete, tb+"/process/session/s1", nil)
	assert.Equal(t, http.StatusNoContent, status)
	status, _, _ = call(t, srv, http.MethodGet, cmd+"/logs", nil)
	assert.Equal(t, http.StatusNotFound, status, "logs go with the session")
	status, _, data = call(t, srv, http.MethodPost, tb+"/process/session/s1/exec", map[string]any{"command": "true"})
	assert.Equal(t, http.StatusInternalServerError, status)
	assert.JSONEq(t, `{"statusCode":500,"message":"failed to execute command: not found: session not found","timestamp":"0001-01-01T00:00:00Z","path":""}`, string(data))
}

// Files: multipart upload making parents, raw download with Range.
func TestFiles(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	tb := create(t, srv, "box")
	upload(t, srv, tb, "/tmp/deep/f.txt", "0123456789")
	status, _, data := call(t, srv, http.MethodGet, tb+"/files/download?path=/tmp/deep/f.txt", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "0123456789", string(data))
	status, _, data = call(t, srv, http.MethodGet, tb+"/files/download?path=/tmp/deep/f.txt", nil, "Range", "bytes=4-")
	assert.Equal(t, http.StatusPartialContent, status)
	assert.Equal(t, "456789", string(data))
	status, _, data = call(t, srv, http.MethodGet, tb+"/files/download?path=/tmp/absent", nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Empty(t, data)
	status, _, data = call(t, srv, http.MethodPost, tb+"/process/execute", map[string]any{"command": "cat /tmp/deep/f.txt"})
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, string(data), "0123456789", "processes see the files")
}

// Commands of one session run one after another: the second gets its id
// at once but starts when the first ends. Input after an exit nobody read
// is 500, not 410.
func TestSessionCommandsQueue(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	tb := create(t, srv, "box")
	status, _, _ := call(t, srv, http.MethodPost, tb+"/process/session", map[string]string{"sessionId": "s"})
	require.Equal(t, http.StatusCreated, status)
	exec := func(command string) string {
		status, _, data := call(t, srv, http.MethodPost, tb+"/process/session/s/exec", map[string]any{"command": command, "runAsync": true})
		require.Equal(t, http.StatusAccepted, status)
		var out struct {
			CmdID string `json:"cmdId"`
		}
		require.NoError(t, json.Unmarshal(data, &out))
		return out.CmdID
	}
	first := exec("read x; echo first")
	second := exec("echo second")
	status, _, data := call(t, srv, http.MethodGet, tb+"/process/session/s/command/"+second+"/logs", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Empty(t, data, "the second waits for the first")
	status, _, _ = call(t, srv, http.MethodPost, tb+"/process/session/s/command/"+first+"/input", map[string]string{"data": "go"})
	require.Equal(t, http.StatusNoContent, status)
	require.Eventually(t, func() bool {
		_, _, data := call(t, srv, http.MethodGet, tb+"/process/session/s/command/"+second+"/logs", nil)
		return string(data) == "second\n"
	}, time.Minute, 10*time.Millisecond)
	status, _, _ = call(t, srv, http.MethodPost, tb+"/process/session/s/command/"+first+"/input", map[string]string{"data": "late"})
	assert.Equal(t, http.StatusInternalServerError, status, "ended, its exit not yet read")
	status, _, data = call(t, srv, http.MethodPost, tb+"/process/session/s/exec", map[string]any{"command": "echo sync; (exit 5)"})
	require.Equal(t, http.StatusOK, status, "a sync exec answers when the command ends")
	assert.Contains(t, string(data), `"exitCode":5`)
	assert.Contains(t, string(data), `"output":"sync\n"`)
}
