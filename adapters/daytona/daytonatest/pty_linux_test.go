package daytonatest_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A job the shell leaves running does not hold the session open (the
// session ends with the shell, as the daemon's does), and it dies with its
// sandbox instead of outliving the server.
func TestPTYJobsLeftBehindDieWithTheSandbox(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	tb := create(t, srv, "box")
	status, _, data := call(t, srv, http.MethodPost, tb+"/process/pty", map[string]any{"id": "p1"})
	require.Equal(t, http.StatusCreated, status, string(data))
	conn, _ := dialPTY(t, srv, tb, "p1")
	require.NoError(t, conn.WriteMessage(websocket.BinaryMessage, []byte("sleep 600 & echo \"bg=$!=\"; exit 0\n")))
	out, ce := readUntilClose(t, conn)
	assert.Equal(t, websocket.CloseNormalClosure, ce.Code, out)
	assert.JSONEq(t, `{"exitCode":0}`, ce.Text)
	m := regexp.MustCompile(`bg=(\d+)=`).FindStringSubmatch(out)
	require.Len(t, m, 2, out)
	pid, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	require.True(t, alive(pid), "the job outlived its shell")

	status, _, data = call(t, srv, http.MethodDelete, "/api/sandbox/box", nil)
	require.Equal(t, http.StatusOK, status, string(data))
	require.Eventually(t, func() bool { return !alive(pid) }, time.Minute, 10*time.Millisecond,
		"the job died with its sandbox")
}

// alive reports whether pid names a process that has not exited (a
// zombie has).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}
