package spritestest

import (
	"errors"
	"io"
	"net/http"

	"github.com/gorilla/websocket"
)

// execHTTP is POST /v1/sprites/{name}/exec: a command over plain HTTP,
// with the exec socket's query (cmd, path, dir, env, stdin), the request
// body as its stdin when ?stdin=true. The answer streams the socket's
// binary frames, one per HTTP chunk (Sprites' SDKs frame by chunk): 1 and
// 2 with output, 3 and the exit code last. A command whose output could
// not be read to its end gets no exit frame. A terminal or an attach is
// refused (400): those need the socket.
func (s *Server) execHTTP(w http.ResponseWriter, r *http.Request, _ []byte) {
	p, err := parseExec(r.URL.Query())
	if err == nil && (p.tty || p.attach != "") {
		err = errHTTPExecSocketOnly
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	sp, id, _, ok := s.admit(w, r, p, false)
	if !ok {
		return
	}
	done, tracked := s.Track()
	if !tracked {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "server closing"})
		return
	}
	defer done()
	ss := s.startSession(sp, id, p)
	c := &client{s: s, wake: make(chan struct{}, 1), gone: make(chan struct{})}
	ss.subscribe(c)
	defer func() {
		close(c.gone)
		ss.unsubscribe(c)
	}()
	if p.stdin {
		fed := make(chan struct{})
		go func() { defer close(fed); feedStdin(r.Body, ss) }()
		defer func() { <-fed }() // the body is the request's: read before the answer ends
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	c.forward(func(m message) error {
		if m.kind != websocket.BinaryMessage {
			return nil // session_info is the socket's
		}
		if _, err := w.Write(m.data); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush() // a frame is a chunk
		}
		return nil
	}, r.Context().Done())
	// An end without the exit (the output cut) sends no exit frame.
}

// errHTTPExecSocketOnly refuses what only the exec socket can serve.
var errHTTPExecSocketOnly = errors.New("tty and attach need the WebSocket exec")

// feedStdin passes a request body to a session's stdin, then its end.
func feedStdin(body io.Reader, ss *session) {
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			ss.writeStdin(buf[:n])
		}
		if err != nil {
			ss.closeStdin()
			return
		}
	}
}
