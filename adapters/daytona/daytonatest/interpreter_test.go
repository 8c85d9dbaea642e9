package daytonatest_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chunk is one output message of the interpreter's socket.
type chunk struct {
	Type, Text, Name, Value, Traceback string
}

// runCode sends one execution and reads its chunks to the close, which it
// answers with them.
func runCode(t *testing.T, srv *daytonatest.Server, toolbox string, request map[string]any) ([]chunk, int, string) {
	t.Helper()
	u := "ws" + strings.TrimPrefix(srv.URL(), "http") + toolbox + "/process/interpreter/execute"
	conn, _, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + srv.Key()}})
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.WriteJSON(request))
	var chunks []chunk
	for {
		_, data, err := conn.ReadMessage()
		var closed *websocket.CloseError
		if errors.As(err, &closed) {
			return chunks, closed.Code, closed.Text
		}
		require.NoError(t, err)
		var c chunk
		require.NoError(t, json.Unmarshal(data, &c), string(data))
		chunks = append(chunks, c)
	}
}

func outputOf(chunks []chunk, kind string) string {
	var b strings.Builder
	for _, c := range chunks {
		if c.Type == kind {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// The code interpreter as the daemon serves it: a default context whose
// globals last, contexts of their own (python only), stdout and stderr
// chunks, an error with the user's traceback, envs for one execution, a
// timeout that interrupts (4008), and the socket's refusals.
func TestCodeInterpreter(t *testing.T) {
	t.Parallel()
	adaptertest.NeedsTools(t, "python3")
	srv := daytonatest.NewServer(t)
	tb := create(t, srv, "box")

	chunks, code, _ := runCode(t, srv, tb, map[string]any{"code": "x = 40\nprint('hi')\nimport sys; print('oops', file=sys.stderr)"})
	assert.Equal(t, websocket.CloseNormalClosure, code)
	assert.Equal(t, "hi\n", outputOf(chunks, "stdout"))
	assert.Equal(t, "oops\n", outputOf(chunks, "stderr"))
	assert.Equal(t, chunk{Type: "control", Text: "completed"}, chunks[len(chunks)-1])
	chunks, _, _ = runCode(t, srv, tb, map[string]any{"code": "print(x + 2)"})
	assert.Equal(t, "42\n", outputOf(chunks, "stdout"), "the default context keeps its globals")

	chunks, code, _ = runCode(t, srv, tb, map[string]any{"code": "def f():\n    raise ValueError('bad')\nf()"})
	assert.Equal(t, websocket.CloseNormalClosure, code)
	var failure chunk
	for _, c := range chunks {
		if c.Type == "error" {
			failure = c
		}
	}
	assert.Equal(t, "ValueError", failure.Name)
	assert.Equal(t, "bad", failure.Value)
	assert.Equal(t, "Traceback (most recent call last):\n  File \"<stdin>\", line 3\n  File \"<stdin>\", line 2\nValueError: bad\n", failure.Traceback)

	chunks, _, _ = runCode(t, srv, tb, map[string]any{"code": "import os; print(os.environ.get('GREETING'))", "envs": map[string]string{"GREETING": "hello"}})
	assert.Equal(t, "hello\n", outputOf(chunks, "stdout"))
	chunks, _, _ = runCode(t, srv, tb, map[string]any{"code": "import os; print(os.environ.get('GREETING'))"})
	assert.Equal(t, "None\n", outputOf(chunks, "stdout"), "envs last one execution")

	chunks, code, _ = runCode(t, srv, tb, map[string]any{"code": "import time\nprint('start', flush=True)\ntime.sleep(600)", "timeout": 1})
	assert.Equal(t, 4008, code, "a timeout interrupts")
	assert.Equal(t, "start\n", outputOf(chunks, "stdout"))
	assert.Equal(t, chunk{Type: "control", Text: "interrupted"}, chunks[len(chunks)-1])

	// Contexts of their own.
	status, _, data := call(t, srv, http.MethodPost, tb+"/process/interpreter/context", map[string]any{"cwd": "/tmp"})
	require.Equal(t, http.StatusOK, status, string(data))
	ctx := decode(t, data)
	assert.Equal(t, "/tmp", ctx["cwd"])
	assert.Equal(t, "python", ctx["language"])
	assert.Equal(t, true, ctx["active"])
	id := ctx["id"].(string)
	chunks, _, _ = runCode(t, srv, tb, map[string]any{"code": "import os; print(os.getcwd()); print('x' in globals())", "contextId": id})
	assert.Equal(t, "/tmp\nFalse\n", outputOf(chunks, "stdout"), "a context of its own: its directory, its globals")
	status, _, data = call(t, srv, http.MethodGet, tb+"/process/interpreter/context", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, string(data), id)
	assert.NotContains(t, string(data), `"default"`, "the default context is not listed")
	status, _, data = call(t, srv, http.MethodPost, tb+"/process/interpreter/context", map[string]any{"language": "ruby"})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, decode(t, data)["message"], "unsupported language: ruby")
	status, _, _ = call(t, srv, http.MethodDelete, tb+"/process/interpreter/context/default", nil)
	assert.Equal(t, http.StatusBadRequest, status)
	status, _, data = call(t, srv, http.MethodDelete, tb+"/process/interpreter/context/"+id, nil)
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"message":"Context deleted successfully"}`, string(data))
	status, _, _ = call(t, srv, http.MethodDelete, tb+"/process/interpreter/context/"+id, nil)
	assert.Equal(t, http.StatusNotFound, status)

	for request, want := range map[string]struct {
		code   int
		reason string
	}{
		`{}`:                            {websocket.ClosePolicyViolation, "code is required"},
		`{"code":"1","timeout":-1}`:     {websocket.ClosePolicyViolation, "timeout must be greater than or equal to 0"},
		`{"code":"1","contextId":"no"}`: {websocket.ClosePolicyViolation, "context not found: no"},
	} {
		var req map[string]any
		require.NoError(t, json.Unmarshal([]byte(request), &req))
		_, code, reason := runCode(t, srv, tb, req)
		assert.Equal(t, want.code, code, request)
		assert.Equal(t, want.reason, reason, request)
	}
}
