package spritestest_test

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Close ends every session's processes and every socket, and returns
// promptly even while clients are attached.
func TestCloseLeavesNoProcess(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.AddSprite("box")
	u := "ws" + strings.TrimPrefix(srv.URL(), "http") + "/v1/sprites/box/exec?" +
		url.Values{"cmd": {"sh", "-c", "echo $$; exec sleep 100"}}.Encode()
	conn, _, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + srv.Token()}})
	require.NoError(t, err)
	defer conn.Close()
	_, _, err = conn.ReadMessage() // session_info
	require.NoError(t, err)
	_, data, err := conn.ReadMessage()
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data[1:])))
	require.NoError(t, err)
	require.NoError(t, stubproc.Signal(pid, 0), "the process runs")

	srv.Close()
	require.Eventually(t, func() bool { return errors.Is(stubproc.Signal(pid, 0), syscall.ESRCH) }, time.Minute, 10*time.Millisecond,
		"the process is gone")
	srv.Close() // idempotent
}

// Faults are used once each, in order, per route; the log shows every
// request with its route.
func TestFaultsQueuePerRoute(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.Fail("GET /v1/sprites", spritestest.Status(503))
	srv.Fail("GET /v1/sprites", spritestest.Status(429))
	get := func() int {
		req, _ := http.NewRequest(http.MethodGet, srv.URL()+"/v1/sprites", nil)
		req.Header.Set("Authorization", "Bearer "+srv.Token())
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		return res.StatusCode
	}
	require.Equal(t, []int{503, 429, 200}, []int{get(), get(), get()})
	require.Equal(t, 3, srv.Count("GET /v1/sprites"))
	require.Equal(t, "spritestest.Server("+srv.URL()+")", srv.String())
}
