package spritestest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/stretchr/testify/require"
)

// A control connection runs one operation at a time: op.start's command
// answers as on the exec socket (session_info, frames, the exit), then
// op.complete with the exit code; a start that cannot run, or one while
// another runs, is op.error; the connection serves the next operation.
// WithoutControl answers 404.
func TestControlConnection(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.AddSprite("box")
	conn := dial(t, srv, "/v1/sprites/box/control")
	defer conn.Close()
	start := func(args map[string]any) {
		b, err := json.Marshal(map[string]any{"type": "op.start", "op": "exec", "args": args})
		require.NoError(t, err)
		require.NoError(t, conn.WriteMessage(websocket.TextMessage, append([]byte("control:"), b...)))
	}
	envelope := func() map[string]any {
		t.Helper()
		for {
			kind, data, err := conn.ReadMessage()
			require.NoError(t, err)
			if rest, ok := strings.CutPrefix(string(data), "control:"); ok && kind == websocket.TextMessage {
				var env map[string]any
				require.NoError(t, json.Unmarshal([]byte(rest), &env))
				return env
			}
		}
	}

	start(map[string]any{"cmd": []string{"sh", "-c", "cat; pwd"}, "dir": "/tmp", "stdin": "true"})
	kind, data, err := conn.ReadMessage()
	require.NoError(t, err)
	require.Equal(t, websocket.TextMessage, kind)
	require.Contains(t, string(data), `"type":"session_info"`)
	require.NoError(t, conn.WriteMessage(websocket.BinaryMessage, append([]byte{0}, "in\n"...)))
	require.NoError(t, conn.WriteMessage(websocket.BinaryMessage, []byte{4}))
	var out []byte
	for {
		_, data, err := conn.ReadMessage()
		require.NoError(t, err)
		if data[0] == 3 {
			require.Equal(t, []byte{3, 0}, data, "the exit frame")
			break
		}
		require.Equal(t, byte(1), data[0])
		out = append(out, data[1:]...)
	}
	require.Equal(t, "in\n/tmp\n", string(out))
	require.Equal(t, map[string]any{"type": "op.complete", "args": map[string]any{"exitCode": float64(0)}}, envelope())

	start(map[string]any{"cmd": []string{"sh", "-c", "exit 9"}})
	require.Equal(t, map[string]any{"type": "op.complete", "args": map[string]any{"exitCode": float64(9)}}, envelope())

	start(map[string]any{"cmd": []string{"pwd"}, "dir": "/absent"})
	require.Equal(t, "op.error", envelope()["type"], "a working directory the sprite lacks")

	start(map[string]any{"cmd": []string{"sleep", "100"}})
	start(map[string]any{"cmd": []string{"true"}})
	busy := envelope()
	require.Equal(t, "op.error", busy["type"])
	require.Contains(t, busy["args"].(map[string]any)["error"], "in progress")
	require.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"signal","signal":"KILL"}`)))
	require.Equal(t, map[string]any{"type": "op.complete", "args": map[string]any{"exitCode": float64(137)}}, envelope(),
		"a data message reaches the running command")

	without := spritestest.NewServer(t, spritestest.WithoutControl())
	without.AddSprite("box")
	_, res, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(without.URL(), "http")+"/v1/sprites/box/control",
		http.Header{"Authorization": {"Bearer " + without.Token()}})
	require.Error(t, err)
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}
