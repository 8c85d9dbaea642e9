package daytonatest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dialPTY connects to a PTY session's WebSocket and reads its first,
// control, message.
func dialPTY(t *testing.T, srv *daytonatest.Server, tb, id string) (*websocket.Conn, map[string]string) {
	t.Helper()
	u := "ws" + strings.TrimPrefix(srv.URL(), "http") + tb + "/process/pty/" + id + "/connect"
	conn, res, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + srv.Key()}})
	require.NoError(t, err)
	assert.Empty(t, res.Header.Get("Sec-WebSocket-Protocol"))
	kind, data, err := conn.ReadMessage()
	require.NoError(t, err)
	require.Equal(t, websocket.TextMessage, kind)
	var control map[string]string
	require.NoError(t, json.Unmarshal(data, &control))
	return conn, control
}

// readUntilClose collects a PTY socket's output up to its close frame.
func readUntilClose(t *testing.T, conn *websocket.Conn) (string, *websocket.CloseError) {
	t.Helper()
	var out strings.Builder
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(time.Minute))) // a hang bound
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			ce, ok := err.(*websocket.CloseError)
			require.True(t, ok, "a close frame, not %v (output %q)", err, out.String())
			return out.String(), ce
		}
		out.Write(data)
	}
}

// PTY sessions as the daemon serves them: create (a login shell on a
// terminal of the size asked for), describe and list, connect (a control
// message first, then the terminal's bytes), resize, an exit in the close
// frame (1011 with the code and a reason), a kill (137 SIGKILL), the
// session forgotten once ended, a lazy session started by its first
// connection, and the errors of each route.
func TestPTYSessions(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	tb := create(t, srv, "box")
	status, _, data := call(t, srv, http.MethodPost, tb+"/process/pty", map[string]any{"id": "p1", "cols": 100, "rows": 30})
	require.Equal(t, http.StatusCreated, status, string(data))
	assert.JSONEq(t, `{"sessionId":"p1"}`, string(data))
	status, _, data = call(t, srv, http.MethodPost, tb+"/process/pty", map[string]any{"id": "p1"})
	assert.Equal(t, http.StatusConflict, status)
	assert.JSONEq(t, `{"error":"PTY session with ID 'p1' already exists"}`, string(data))
	status, _, data = call(t, srv, http.MethodPost, tb+"/process/pty", map[string]any{"id": "big", "cols": 1001})
	assert.Equal(t, http.StatusBadRequest, status, string(data))

	status, _, data = call(t, srv, http.MethodGet, tb+"/process/pty/p1", nil)
	require.Equal(t, http.StatusOK, status)
	var info struct {
		ID     string            `json:"id"`
		Cwd    string            `json:"cwd"`
		Cols   int               `json:"cols"`
		Rows   int               `json:"rows"`
		Active bool              `json:"active"`
		Envs   map[string]string `json:"envs"`
	}
	require.NoError(t, json.Unmarshal(data, &info))
	assert.Equal(t, "/home/daytona", info.Cwd)
	assert.Equal(t, [3]any{100, 30, true}, [3]any{info.Cols, info.Rows, info.Active})
	assert.Equal(t, "xterm-256color", info.Envs["TERM"])

	conn, control := dialPTY(t, srv, tb, "p1")
	assert.Equal(t, map[string]string{"type": "control", "status": "connected"}, control)
	status, _, data = call(t, srv, http.MethodPost, tb+"/process/pty/p1/resize", map[string]any{"cols": 120, "rows": 40})
	require.Equal(t, http.StatusOK, status, string(data))
	assert.Contains(t, string(data), `"cols":120`)
	require.NoError(t, conn.WriteMessage(websocket.BinaryMessage, []byte("echo \"size=$(stty size) who=$(id -un)\"; exit 3\n")))
	out, ce := readUntilClose(t, conn)
	assert.Contains(t, out, "size=40 120")
	assert.Contains(t, out, "who=daytona")
	assert.Equal(t, websocket.CloseInternalServerErr, ce.Code)
	assert.JSONEq(t, `{"exitCode":3,"exitReason":"non-zero exit"}`, ce.Text)
	require.Eventually(t, func() bool {
		status, _, _ := call(t, srv, http.MethodGet, tb+"/process/pty/p1", nil)
		return status == http.StatusNotFound
	}, time.Minute, 10*time.Millisecond, "an ended session is forgotten")

	status, _, _ = call(t, srv, http.MethodPost, tb+"/process/pty", map[string]any{"id": "lazy", "lazyStart": true})
	require.Equal(t, http.StatusCreated, status)
	status, _, data = call(t, srv, http.MethodGet, tb+"/process/pty", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, string(data), `"id":"lazy"`)
	assert.Contains(t, string(data), `"active":false`, "not started before its first connection")
	conn, control = dialPTY(t, srv, tb, "lazy")
	assert.Equal(t, "connected", control["status"])
	status, _, data = call(t, srv, http.MethodDelete, tb+"/process/pty/lazy", nil)
	require.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"message":"PTY session deleted"}`, string(data))
	_, ce = readUntilClose(t, conn)
	assert.Equal(t, websocket.CloseInternalServerErr, ce.Code)
	assert.JSONEq(t, `{"exitCode":137,"exitReason":"SIGKILL"}`, ce.Text)

	status, _, data = call(t, srv, http.MethodDelete, tb+"/process/pty/lazy", nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.JSONEq(t, `{"error":"PTY session not found"}`, string(data))
	status, _, _ = call(t, srv, http.MethodPost, tb+"/process/pty/lazy/resize", map[string]any{"cols": 10, "rows": 10})
	assert.Equal(t, http.StatusGone, status)
	conn, control = dialPTY(t, srv, tb, "ghost")
	assert.Equal(t, "error", control["status"])
	_ = conn.Close()
	status, _, _ = call(t, srv, http.MethodGet, tb+"/process/pty/create-connect", nil)
	assert.Equal(t, http.StatusNotFound, status, "the SDK's newer create-connect is not this daemon version's")
}
