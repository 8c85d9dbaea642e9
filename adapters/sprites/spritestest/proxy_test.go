package spritestest_test

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The proxy tunnels a WebSocket to a TCP port in the sprite, as the
// SDKs' ProxySocket speaks it: the JSON init, {"status":"connected"} with
// the target, then binary messages each way; a refused port is an error
// status and a normal close.
func TestProxyTunnelsToAPort(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.AddSprite("box")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() { // an echo server that upper-cases, in the sprite
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(io.LimitReader(c, 4))
		_, _ = c.Write([]byte(strings.ToUpper(string(b))))
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	dial := func() *websocket.Conn {
		u := "ws" + strings.TrimPrefix(srv.URL(), "http") + "/v1/sprites/box/proxy"
		conn, _, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + srv.Token()}})
		require.NoError(t, err)
		return conn
	}
	conn := dial()
	defer conn.Close()
	require.NoError(t, conn.WriteJSON(map[string]any{"host": "127.0.0.1", "port": port}))
	var status struct{ Status, Target string }
	require.NoError(t, conn.ReadJSON(&status))
	assert.Equal(t, "connected", status.Status)
	assert.Equal(t, "127.0.0.1:"+strconv.Itoa(port), status.Target)
	require.NoError(t, conn.WriteMessage(websocket.BinaryMessage, []byte("ping")))
	kind, data, err := conn.ReadMessage()
	require.NoError(t, err)
	assert.Equal(t, websocket.BinaryMessage, kind)
	assert.Equal(t, "PING", string(data))
	_, _, err = conn.ReadMessage()
	assert.True(t, websocket.IsCloseError(err, websocket.CloseNormalClosure), "the port closed, the tunnel closes: %v", err)

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := closed.Addr().(*net.TCPAddr).Port
	require.NoError(t, closed.Close())
	conn = dial()
	defer conn.Close()
	require.NoError(t, conn.WriteJSON(map[string]any{"host": "127.0.0.1", "port": refused}))
	require.NoError(t, conn.ReadJSON(&status))
	assert.Equal(t, "error", status.Status)
}

// Upgrade has nothing to do (the environment is the newest): 204; an
// unknown sprite is 404.
func TestUpgrade(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.AddSprite("box")
	status, _, _ := call(t, srv, http.MethodPost, "/v1/sprites/box/upgrade", "")
	assert.Equal(t, http.StatusNoContent, status)
	status, _, _ = call(t, srv, http.MethodPost, "/v1/sprites/nobox/upgrade", "")
	assert.Equal(t, http.StatusNotFound, status)
}
