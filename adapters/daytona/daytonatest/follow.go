package daytonatest

import (
	"bytes"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
)

// Follow timing: the daemon reads the journal every 20 ms and, after about
// a second of nothing new, looks for the exit code; found, it closes.
const (
	followPoll      = 20 * time.Millisecond
	followFrame     = 1024
	defaultIdlePoll = 50 // polls of nothing before the exit code is checked
)

var upgrader = websocket.Upgrader{
	ReadBufferSize: 1024, WriteBufferSize: 1024,
	CheckOrigin: func(*http.Request) bool { return true },
}

// follow serves the journal over a WebSocket: binary frames of at most 1024
// bytes from byte zero (markers cut wherever a frame ends), then what is
// appended; with ?follow=true it closes (1000) only once the exit code
// exists and a second of nothing new has passed, or at once when the
// session is deleted. Without follow it replays and closes. Split output
// and SDK versions choose raw frames; otherwise markers are stripped.
func (s *Server) follow(w http.ResponseWriter, r *http.Request, ss *session, c *command) {
	raw := r.Header.Get("X-Daytona-Split-Output") == "true" || r.Header.Get("X-Daytona-SDK-Version") != ""
	var respHeader http.Header
	for _, p := range websocket.Subprotocols(r) {
		if len(p) > len("X-Daytona-SDK-Version~") && p[:len("X-Daytona-SDK-Version~")] == "X-Daytona-SDK-Version~" {
			raw = true
			respHeader = http.Header{"Sec-WebSocket-Protocol": {p}}
		}
	}
	conn, err := upgrader.Upgrade(w, r, respHeader)
	if err != nil {
		return
	}
	defer conn.Close()
	go func() { // answer pings; notice the client leaving
		for {
			if _, _, err := conn.NextReader(); err != nil {
				return
			}
		}
	}()
	following := r.URL.Query().Get("follow") == "true" && !s.take(&s.cutFollows)
	idleLimit := s.idlePolls
	sent, idle := 0, 0
	var carry []byte // stripped mode: bytes that may begin a marker
	send := func(b []byte) error {
		if !raw {
			b = append(carry, b...)
			carry = nil
			b = bytes.ReplaceAll(bytes.ReplaceAll(b, stdoutMarker, nil), stderrMarker, nil)
			for _, n := range []int{2, 1} {
				if len(b) >= n && (bytes.Equal(b[len(b)-n:], stdoutMarker[:n]) || bytes.Equal(b[len(b)-n:], stderrMarker[:n])) {
					carry, b = append([]byte(nil), b[len(b)-n:]...), b[:len(b)-n]
					break
				}
			}
		}
		for len(b) > 0 {
			n := min(len(b), s.frameSize)
			if n < len(b) && n > 3 && (bytes.HasSuffix(b[:n], stdoutMarker) || bytes.HasSuffix(b[:n], stderrMarker)) {
				// Frames split markers anywhere but right after a whole
				// one: through the official SDK the daemon's frames give
				// back every byte (spec, appendix B), and the SDK's demuxer
				// emits the first byte of a marker that ends a frame.
				n--
			}
			if err := conn.WriteMessage(websocket.BinaryMessage, b[:n]); err != nil {
				return err
			}
			b = b[n:]
		}
		return nil
	}
	closeNormal := func() {
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	}
	for {
		fresh, exited := c.since(sent)
		if len(fresh) > 0 {
			if err := send(fresh); err != nil {
				return
			}
			sent, idle = sent+len(fresh), 0
		} else {
			idle++
		}
		if !following {
			closeNormal()
			return
		}
		if exited && idle >= idleLimit {
			closeNormal()
			return
		}
		select {
		case <-ss.gone:
			if fresh, _ := c.since(sent); len(fresh) > 0 {
				_ = send(fresh)
			}
			closeNormal()
			return
		case <-s.Closing():
			return
		case <-r.Context().Done():
			return
		case <-time.After(followPoll):
		}
	}
}
