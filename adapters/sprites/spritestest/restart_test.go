package spritestest_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubproc"
	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/stretchr/testify/require"
)

// A restart boots the sprite again before it answers: its sessions end,
// a service that ran runs again (a new process), the files stay. Check
// answers for a sprite that exists; both are 404 for one that does not.
func TestRestartAndCheck(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.AddSprite("box")
	writeFiles(t, srv, "/home/sprite/kept")
	code, _ := streamUntil(t, srv, http.MethodPut, "/v1/sprites/box/services/web?duration=0s", `{"cmd":"sleep","args":["100"]}`, nil)
	require.Equal(t, http.StatusOK, code)
	before := getService(t, srv, "web").State.PID
	require.NotZero(t, before)
	session := dialExec(t, srv, "sh", "-c", "echo $$; exec sleep 100")
	defer session.Close()
	_, _, err := session.ReadMessage() // session_info
	require.NoError(t, err)
	_, data, err := session.ReadMessage()
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data[1:])))
	require.NoError(t, err)

	status, body, _ := call(t, srv, http.MethodPost, "/v1/sprites/box/restart", "")
	require.Equal(t, http.StatusOK, status, body)
	var restarted struct {
		SpriteName string `json:"sprite_name"`
		MachineID  string `json:"machine_id"`
		Message    string `json:"message"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &restarted))
	require.Equal(t, "box", restarted.SpriteName)
	require.Regexp(t, `^[0-9a-f]{14}$`, restarted.MachineID)
	require.NotEmpty(t, restarted.Message)

	require.True(t, errors.Is(stubproc.Signal(pid, 0), syscall.ESRCH), "the session's process ended before the answer")
	status, body, _ = call(t, srv, http.MethodGet, "/v1/sprites/box/exec", "")
	require.Equal(t, http.StatusOK, status)
	require.JSONEq(t, `{"sessions":[],"count":0}`, body)
	after := getService(t, srv, "web")
	require.Equal(t, "running", after.State.Status, "the service that ran runs again")
	require.NotEqual(t, before, after.State.PID)
	kept, ok := srv.File("box", "/home/sprite/kept")
	require.True(t, ok)
	require.Equal(t, "x", string(kept))

	status, body, _ = call(t, srv, http.MethodGet, "/v1/sprites/box/check", "")
	require.Equal(t, http.StatusOK, status)
	var check struct {
		SpriteName string    `json:"sprite_name"`
		SpriteID   string    `json:"sprite_id"`
		Status     string    `json:"status"`
		CheckedAt  time.Time `json:"checked_at"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &check))
	require.Equal(t, "box", check.SpriteName)
	require.NotEmpty(t, check.SpriteID)
	require.Equal(t, "healthy", check.Status)
	require.WithinDuration(t, time.Now(), check.CheckedAt, time.Hour)

	for _, route := range []string{"POST /v1/sprites/absent/restart", "GET /v1/sprites/absent/check"} {
		method, path, _ := strings.Cut(route, " ")
		status, _, _ = call(t, srv, method, path, "")
		require.Equal(t, http.StatusNotFound, status, route)
	}
}
