package spritestest

import (
	"cmp"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
)

// socketWriteTimeout bounds one write to an exec socket: a client that
// reads nothing for that long is given up. It is long: a slow reader is a
// client under load (a loaded CI machine once left readers unscheduled
// past the 10 s this used to be), not a dead one, and the session keeps
// its output for an attach either way.
const socketWriteTimeout = time.Minute

// DropCommand is a command the server does not run: it prints its
// arguments (joined by spaces, then a newline) on stdout, and the socket
// then closes normally with no exit frame, as a lost connection does.
const DropCommand = "spritestest-drop"

// client is one exec or attach socket. Messages for it are queued (a slow
// client never stalls the process or other clients) and written by the
// handler's goroutine; a reader goroutine passes its input on.
type client struct {
	s     *Server
	conn  *websocket.Conn
	tty   bool
	owner bool

	mu    sync.Mutex
	queue []message
	wake  chan struct{}
	gone  chan struct{} // closed when the client's side of the socket ends
}

func newClient(s *Server, conn *websocket.Conn) *client {
	conn.SetPingHandler(func(data string) error { return pong(conn, data) })
	return &client{s: s, conn: conn, wake: make(chan struct{}, 1), gone: make(chan struct{})}
}

// pong answers a ping within the socket's write timeout, as every other
// write here: a client that stops reading for a while (a slow consumer,
// its receive buffer full) must not lose its socket because a pong waited
// a second, which is all the library's own handler gives it before it
// marks the connection broken for every later write (the exit included).
// A pong that waits for another writer past that time is skipped; one the
// socket itself refuses that long finds the client gone, as any write here
// would.
func pong(conn *websocket.Conn, data string) error {
	err := conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(socketWriteTimeout))
	var ne net.Error
	if errors.Is(err, websocket.ErrCloseSent) || errors.As(err, &ne) && ne.Timeout() {
		return nil
	}
	return err
}

// forward writes c's queued messages with write as they come until the
// session's end: it returns that message (its exit, or abort when the
// output was cut), or false once write fails or gone or the server's
// closing comes first.
func (c *client) forward(write func(message) error, gone <-chan struct{}) (message, bool) {
	for {
		c.mu.Lock()
		batch := c.queue
		c.queue = nil
		c.mu.Unlock()
		for _, m := range batch {
			if m.abort {
				return m, true
			}
			if err := write(m); err != nil {
				return m, false
			}
			if m.exit {
				return m, true
			}
		}
		select {
		case <-c.wake:
		case <-gone:
			return message{}, false
		case <-c.s.Closing():
			return message{}, false
		}
	}
}

// send queues m.
func (c *client) send(m message) {
	c.mu.Lock()
	c.queue = append(c.queue, m)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes queued messages until the exit has been sent and held,
// the client leaves, or the server closes.
func (c *client) writeLoop() {
	m, ok := c.forward(func(m message) error {
		_ = c.conn.SetWriteDeadline(time.Now().Add(socketWriteTimeout))
		return c.conn.WriteMessage(m.kind, m.data)
	}, c.gone)
	switch {
	case !ok:
	case m.abort:
		c.closeWith(websocket.CloseInternalServerErr)
	default:
		c.endAfterExit()
	}
}

// endAfterExit holds the socket open after the exit, as production does
// (about 5 s), then closes it: with a close frame, except for a TTY
// attacher, whose socket is dropped with none.
func (c *client) endAfterExit() {
	select {
	case <-time.After(c.s.exitHold):
	case <-c.gone:
		return
	case <-c.s.Closing():
		return
	}
	if c.tty && !c.owner {
		return // the handler closes the TCP connection: no close frame
	}
	c.closeWith(websocket.CloseNormalClosure)
}

// closeWith sends a close frame and waits briefly for the client's answer.
func (c *client) closeWith(code int) {
	_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(time.Second))
	select {
	case <-c.gone:
	case <-time.After(time.Second):
	case <-c.s.Closing():
	}
}

// readLoop passes the client's input to ss (nil for a script, whose input
// is read and dropped), and marks the client gone when its side ends.
func (c *client) readLoop(ss *session) {
	defer func() {
		close(c.gone)
		if ss != nil {
			ss.unsubscribe(c)
		}
	}()
	c.conn.SetReadLimit(16 << 20)
	for {
		kind, data, err := c.conn.ReadMessage()
		if err != nil {
			return
		}
		if ss != nil {
			ss.input(kind, data)
		}
	}
}

// input passes one message of a client to the session: stdin (with its
// stream id unless a terminal), stdin's end, or a resize or signal.
func (ss *session) input(kind int, data []byte) {
	switch kind {
	case websocket.BinaryMessage:
		switch {
		case ss.tty:
			ss.writeStdin(data)
		case len(data) == 0:
		case data[0] == idStdin:
			ss.writeStdin(data[1:])
		case data[0] == idStdinEOF:
			ss.closeStdin()
		}
	case websocket.TextMessage:
		var m struct {
			Type   string `json:"type"`
			Cols   uint16 `json:"cols"`
			Rows   uint16 `json:"rows"`
			Signal string `json:"signal"`
		}
		if json.Unmarshal(data, &m) != nil {
			return
		}
		switch m.Type {
		case "resize":
			ss.resize(m.Rows, m.Cols)
		case "signal":
			if sig, _, ok := signalNamed(m.Signal); ok {
				ss.signal(sig)
			}
		}
	}
}

var upgrader = websocket.Upgrader{
	ReadBufferSize: 64 << 10, WriteBufferSize: 64 << 10,
	CheckOrigin: func(*http.Request) bool { return true },
}

// upgrade completes the WebSocket handshake, with the capabilities header.
func (s *Server) upgrade(w http.ResponseWriter, r *http.Request) (*websocket.Conn, bool) {
	h := http.Header{}
	if s.capabilities != "" {
		h.Set("X-Sprite-Capabilities", s.capabilities)
	}
	conn, err := upgrader.Upgrade(w, r, h)
	return conn, err == nil
}

// execRoute serves GET /v1/sprites/{name}/exec: a WebSocket upgrade starts
// a command (or attaches, in the legacy ?id= form); a plain GET lists the
// sessions.
func (s *Server) execRoute(w http.ResponseWriter, r *http.Request) {
	if websocket.IsWebSocketUpgrade(r) {
		s.serve("WS /v1/sprites/{name}/exec", s.execSocket)(w, r)
		return
	}
	s.serve("GET /v1/sprites/{name}/exec", s.listSessions)(w, r)
}

// sessionRoute serves GET /v1/sprites/{name}/exec/{session}: an upgrade
// attaches; a plain GET describes a live session.
func (s *Server) sessionRoute(w http.ResponseWriter, r *http.Request) {
	if websocket.IsWebSocketUpgrade(r) {
		s.serve("WS /v1/sprites/{name}/exec/{session}", s.attachSocket)(w, r)
		return
	}
	s.serve("GET /v1/sprites/{name}/exec/{session}", s.getSession)(w, r)
}

// execSocket starts a command and streams it.
func (s *Server) execSocket(w http.ResponseWriter, r *http.Request, _ []byte) {
	p, err := parseExec(r.URL.Query())
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	if p.attach != "" {
		if ss, ok := s.findSession(w, r, p.attach); ok {
			s.attach(w, r, ss)
		}
		return
	}
	sp, id, script, ok := s.admit(w, r, p, true)
	if !ok {
		return
	}
	s.socket(w, r, func(conn *websocket.Conn) {
		if script != nil {
			s.runScript(conn, id, *script)
			return
		}
		s.stream(conn, s.startSession(sp, id, p))
	})
}

// admit finds the request's sprite and admits a command to it (one
// admission for every form of exec): 503 while the sprite starts, 400 for
// a working directory it lacks; the command gets its session id, and
// where scripted, the next queued script or the drop command's.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, p execParams, scripted bool) (*sprite, string, *Script, bool) {
	sp, ok := s.lock(w, r)
	if !ok {
		return nil, "", nil, false
	}
	defer s.mu.Unlock()
	if sp.coldStart > 0 {
		sp.coldStart--
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "sprite is starting, try again"})
		return nil, "", nil, false
	}
	if p.dir != "" {
		host, err := sp.hostPath(p.dir)
		if info, serr := os.Stat(host); err != nil || serr != nil || !info.IsDir() {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "working directory does not exist: " + p.dir})
			return nil, "", nil, false
		}
	}
	var script *Script
	if scripted && len(s.scripts) > 0 {
		script, s.scripts = &s.scripts[0], s.scripts[1:]
	} else if scripted && p.argv[0] == DropCommand {
		script = dropScript(p.argv[1:])
	}
	id := strconv.Itoa(s.nextPID)
	s.nextPID++
	sp.touch()
	return sp, id, script, true
}

// socket upgrades the request and serves the connection, counted so that
// Close waits for it.
func (s *Server) socket(w http.ResponseWriter, r *http.Request, serve func(*websocket.Conn)) {
	done, ok := s.Track()
	if !ok {
		return
	}
	defer done()
	conn, ok := s.upgrade(w, r)
	if !ok {
		return
	}
	defer conn.Close()
	serve(conn)
}

// stream subscribes a socket to ss and serves it until it ends.
func (s *Server) stream(conn *websocket.Conn, ss *session) {
	c := newClient(s, conn)
	ss.subscribe(c)
	s.Go(func() { c.readLoop(ss) })
	c.writeLoop()
}

// findSession finds a live session of the request's sprite, or answers
// 404 (an unknown or ended session fails an attach's handshake so).
func (s *Server) findSession(w http.ResponseWriter, r *http.Request, id string) (*session, bool) {
	sp, ok := s.lock(w, r)
	if !ok {
		return nil, false
	}
	defer s.mu.Unlock()
	ss := sp.sessions[id]
	if ss == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "session not found: " + id})
		return nil, false
	}
	return ss, true
}

// attachSocket is the path form of attach.
func (s *Server) attachSocket(w http.ResponseWriter, r *http.Request, _ []byte) {
	if ss, ok := s.findSession(w, r, r.PathValue("session")); ok {
		s.attach(w, r, ss)
	}
}

// attach joins a live session: session_info, the scrollback, then live
// output.
func (s *Server) attach(w http.ResponseWriter, r *http.Request, ss *session) {
	s.socket(w, r, func(conn *websocket.Conn) { s.stream(conn, ss) })
}

// listSessions is GET /v1/sprites/{name}/exec: the live sessions.
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request, _ []byte) {
	sp, ok := s.lock(w, r)
	if !ok {
		return
	}
	list := sp.sessionList()
	s.mu.Unlock()
	sort.Slice(list, func(i, j int) bool {
		a, _ := strconv.Atoi(list[i].id)
		b, _ := strconv.Atoi(list[j].id)
		return a < b
	})
	entries := make([]map[string]any, 0, len(list))
	for _, ss := range list {
		entries = append(entries, ss.entry())
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": entries, "count": len(entries)})
}

// getSession is GET /v1/sprites/{name}/exec/{session}.
func (s *Server) getSession(w http.ResponseWriter, r *http.Request, _ []byte) {
	if ss, ok := s.findSession(w, r, r.PathValue("session")); ok {
		writeJSON(w, http.StatusOK, ss.entry())
	}
}

// killSession is POST /v1/sprites/{name}/exec/{session}/kill?signal=&
// timeout=: the signal to the process group, a wait of up to timeout, then
// SIGKILL, reported as NDJSON ending in complete with the exit code. With
// timeout=0s the signal is all: the stream ends after its signal event.
func (s *Server) killSession(w http.ResponseWriter, r *http.Request, _ []byte) {
	q := r.URL.Query()
	name := q.Get("signal")
	name = cmp.Or(name, "SIGTERM")
	sig, canon, ok := signalNamed(name)
	if !ok {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unknown signal: " + name})
		return
	}
	timeout := 10 * time.Second
	if v := q.Get("timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid timeout: " + v})
			return
		}
		timeout = d
	}
	ss, ok := s.findSession(w, r, r.PathValue("session"))
	if !ok {
		return
	}
	out := startNDJSON(w)
	pid := ss.pid()
	out.line(map[string]any{"type": "signal", "message": "Sending " + canon + " to process group " + strconv.Itoa(pid),
		"signal": canon, "pid": pid})
	ss.signal(sig)
	if timeout == 0 {
		// A zero timeout is a signal alone (Sprites' own client sends one
		// with every signal, USR1 included): no wait and no escalation.
		return
	}
	select {
	case <-ss.done:
		out.line(map[string]any{"type": "exited", "message": "Process exited"})
	case <-time.After(timeout):
		out.line(map[string]any{"type": "timeout", "message": "Timeout after " + timeout.String() + ", sending SIGKILL"})
		ss.signal(syscall.SIGKILL)
		select {
		case <-ss.done:
			out.line(map[string]any{"type": "killed", "message": "Process killed"})
		case <-time.After(10 * time.Second):
			out.line(map[string]any{"type": "error", "message": "Warning: process may not have terminated"})
			return
		}
	}
	ss.mu.Lock()
	code := ss.exitCode
	ss.mu.Unlock()
	out.line(map[string]any{"type": "complete", "exit_code": code})
}

// Frame is one WebSocket message a Script sends.
type Frame struct {
	Text bool
	Data []byte
}

// StdoutFrame is a non-TTY stdout frame.
func StdoutFrame(s string) Frame { return Frame{Data: append([]byte{idStdout}, s...)} }

// StderrFrame is a non-TTY stderr frame.
func StderrFrame(s string) Frame { return Frame{Data: append([]byte{idStderr}, s...)} }

// ExitFrame is the non-TTY exit frame [3, code].
func ExitFrame(code byte) Frame { return Frame{Data: []byte{idExit, code}} }

// BinaryFrame is a binary frame of exactly b (a variant exit, an unknown
// stream id, an empty frame, raw TTY bytes).
func BinaryFrame(b ...byte) Frame { return Frame{Data: b} }

// TextFrame is a text frame.
func TextFrame(s string) Frame { return Frame{Text: true, Data: []byte(s)} }

// ExitTextFrame is the JSON exit message, {"type":"exit","exit_code":N}.
func ExitTextFrame(code int) Frame {
	return TextFrame(`{"type":"exit","exit_code":` + strconv.Itoa(code) + `}`)
}

// End is how a Script's socket ends.
type End int

const (
	// EndHold keeps the socket open for the exit hold, then closes it
	// normally (production after an exit).
	EndHold End = iota
	// EndClose sends a normal close (1000) at once.
	EndClose
	// EndCloseAbnormal sends close code 1011 at once.
	EndCloseAbnormal
	// EndReset drops the TCP connection with a reset and no close frame.
	EndReset
	// EndHang sends nothing more and answers no pings until the client
	// leaves.
	EndHang
	// EndSameWrite sends the Frames and a normal close frame in one TCP
	// write (an exit still in flight when the close arrives).
	EndSameWrite
)

// Script replaces the command of the next exec upgrade (on any sprite):
// nothing runs; the server sends the frames and ends the socket as End
// says.
type Script struct {
	BeforeInfo []Frame // sent before session_info (replay arriving early)
	NoInfo     bool    // no session_info at all
	NumericID  bool    // session_id as a JSON number, as older servers sent it
	TTY        bool    // session_info says tty
	Frames     []Frame // sent after session_info
	End        End
}

// Script queues sc for the next exec upgrade.
func (s *Server) Script(sc Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts = append(s.scripts, sc)
}

// dropScript is DropCommand's behaviour.
func dropScript(args []string) *Script {
	text := ""
	for i, a := range args {
		if i > 0 {
			text += " "
		}
		text += a
	}
	return &Script{Frames: []Frame{StdoutFrame(text + "\n")}, End: EndClose}
}

// runScript plays sc on conn.
func (s *Server) runScript(conn *websocket.Conn, id string, sc Script) {
	c := newClient(s, conn)
	c.owner = true
	if sc.End == EndHang {
		conn.SetPingHandler(func(string) error { return nil }) // a silent server
	}
	s.Go(func() { c.readLoop(nil) })
	write := func(f Frame) bool {
		kind := websocket.BinaryMessage
		if f.Text {
			kind = websocket.TextMessage
		}
		_ = conn.SetWriteDeadline(time.Now().Add(socketWriteTimeout))
		return conn.WriteMessage(kind, f.Data) == nil
	}
	for _, f := range sc.BeforeInfo {
		if !write(f) {
			return
		}
	}
	if !sc.NoInfo {
		var sid any = id
		if sc.NumericID {
			sid, _ = strconv.Atoi(id)
		}
		info, _ := json.Marshal(map[string]any{"type": "session_info", "session_id": sid, "command": "scripted",
			"created": time.Now().Unix(), "cols": 0, "rows": 0, "is_owner": true, "tty": sc.TTY})
		if !write(Frame{Text: true, Data: info}) {
			return
		}
	}
	if sc.End == EndSameWrite {
		var raw []byte
		for _, f := range sc.Frames {
			raw = appendFrame(raw, f)
		}
		raw = append(raw, 0x88, 0x02, 0x03, 0xe8) // close 1000
		_, _ = conn.NetConn().Write(raw)
		select {
		case <-c.gone:
		case <-time.After(time.Second):
		case <-s.Closing():
		}
		return
	}
	for _, f := range sc.Frames {
		if !write(f) {
			return
		}
	}
	switch sc.End {
	case EndHold:
		c.endAfterExit()
	case EndClose:
		c.closeWith(websocket.CloseNormalClosure)
	case EndCloseAbnormal:
		c.closeWith(websocket.CloseInternalServerErr)
	case EndReset:
		if tc, ok := conn.NetConn().(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
	case EndHang:
		select {
		case <-c.gone:
		case <-s.Closing():
		}
	}
}

// appendFrame encodes f as an unmasked server frame.
func appendFrame(b []byte, f Frame) []byte {
	op := byte(0x82)
	if f.Text {
		op = 0x81
	}
	b = append(b, op)
	switch n := len(f.Data); {
	case n < 126:
		b = append(b, byte(n))
	case n < 1<<16:
		b = append(b, 126, byte(n>>8), byte(n))
	default:
		b = append(b, 127, 0, 0, 0, 0, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, f.Data...)
}
