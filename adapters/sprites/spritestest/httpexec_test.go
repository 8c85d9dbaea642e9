package spritestest_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/stretchr/testify/require"
)

// httpExec sends POST …/exec over a raw connection and reads the answer's
// HTTP chunks as they are on the wire: the status and each chunk.
func httpExec(t *testing.T, srv *spritestest.Server, q url.Values, stdin string) (int, [][]byte) {
	t.Helper()
	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /v1/sprites/box/exec?%s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/octet-stream\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		q.Encode(), u.Host, srv.Token(), len(stdin), stdin)
	require.NoError(t, err)
	in := bufio.NewReader(conn)
	res, err := http.ReadResponse(in, nil)
	require.NoError(t, err)
	if res.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, res.Body)
		return res.StatusCode, nil
	}
	require.Equal(t, []string{"chunked"}, res.TransferEncoding)
	// ReadResponse would join the chunks: read them from the wire instead.
	var chunks [][]byte
	for {
		line, err := in.ReadString('\n')
		require.NoError(t, err)
		size, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		require.NoError(t, err, line)
		if size == 0 {
			return res.StatusCode, chunks
		}
		chunk := make([]byte, size+2)
		_, err = io.ReadFull(in, chunk)
		require.NoError(t, err)
		chunks = append(chunks, chunk[:size])
	}
}

// HTTP exec answers the exec socket's frames, one per HTTP chunk: output
// as it comes (1 stdout, 2 stderr), the exit (3, code) last; stdin is the
// body when asked for; the query is the socket's; a terminal is refused.
func TestHTTPExec(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	srv.AddSprite("box")
	cmd := func(args ...string) url.Values { return url.Values{"cmd": args} }

	// stdout and stderr are two pipes read apart: their order is not the
	// test's to fix, each chunk is one frame and the exit the last.
	status, chunks := httpExec(t, srv, cmd("sh", "-c", "echo out; echo err >&2; exit 3"), "")
	require.Equal(t, http.StatusOK, status)
	require.Len(t, chunks, 3)
	require.ElementsMatch(t, [][]byte{append([]byte{1}, "out\n"...), append([]byte{2}, "err\n"...)}, chunks[:2])
	require.Equal(t, []byte{3, 3}, chunks[2])

	q := cmd("sh", "-c", "cat; pwd; echo $GREETING")
	q.Set("stdin", "true")
	q.Set("dir", "/tmp")
	q.Add("env", "GREETING=hi")
	q.Add("env", "PATH=/usr/bin:/bin")
	_, chunks = httpExec(t, srv, q, "input\n")
	var out []byte
	for _, c := range chunks[:len(chunks)-1] {
		require.Equal(t, byte(1), c[0], "stdout frames")
		out = append(out, c[1:]...)
	}
	require.Equal(t, "input\n/tmp\nhi\n", string(out))
	require.Equal(t, []byte{3, 0}, chunks[len(chunks)-1])

	_, chunks = httpExec(t, srv, cmd("true"), "")
	require.Equal(t, [][]byte{{3, 0}}, chunks, "a command with no output: the exit alone")

	for _, bad := range []url.Values{{"cmd": {"sh"}, "tty": {"true"}}, {"cmd": {"sh"}, "id": {"7"}}, {"cmd": {"sh"}, "rows": {"x"}}} {
		status, _ = httpExec(t, srv, bad, "")
		require.Equal(t, http.StatusBadRequest, status, bad.Encode())
	}
	status, _ = httpExec(t, srv, url.Values{"cmd": {"pwd"}, "dir": {"/absent"}}, "")
	require.Equal(t, http.StatusBadRequest, status, "a working directory the sprite lacks")
}

// dialExec opens an exec socket on sprite box running argv.
func dialExec(t *testing.T, srv *spritestest.Server, argv ...string) *websocket.Conn {
	t.Helper()
	return dial(t, srv, "/v1/sprites/box/exec?"+url.Values{"cmd": argv}.Encode())
}

// dial opens an authorised WebSocket to path; its reads fail after
// hangBound (a server that never answers fails the test, not go test's
// own timeout).
func dial(t *testing.T, srv *spritestest.Server, path string) *websocket.Conn {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL(), "http")+path,
		http.Header{"Authorization": {"Bearer " + srv.Token()}})
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(hangBound)))
	return conn
}

// hangBound bounds a test's wait for an answer: generous, never the verdict.
const hangBound = 2 * time.Minute

// runIn runs argv in sprite box over HTTP exec and returns its stdout,
// requiring exit 0.
func runIn(t *testing.T, srv *spritestest.Server, argv ...string) string {
	t.Helper()
	status, chunks := httpExec(t, srv, url.Values{"cmd": argv}, "")
	require.Equal(t, http.StatusOK, status)
	require.NotEmpty(t, chunks)
	require.Equal(t, []byte{3, 0}, chunks[len(chunks)-1], "exit 0")
	var out []byte
	for _, c := range chunks[:len(chunks)-1] {
		if c[0] == 1 {
			out = append(out, c[1:]...)
		}
	}
	return string(out)
}
