package daytonatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// The toolbox's PTY sessions, as the daemon serves them (its
// process/pty package): create starts an
// interactive login shell on a terminal (or, with lazyStart, at the first
// connection); clients connect over a WebSocket whose first message is a
// control message, then binary output and input either way; the end is in
// the close frame (1000 for exit 0, 1011 with the code and a reason
// otherwise, 137 SIGKILL for a kill); an ended session is forgotten.
// Output nobody is connected for is lost, as the daemon's broadcast drops
// it. The SDK's createPty dials /process/pty/create-connect, which this
// daemon version does not have (404), as the real one does not.

// ptyInfo is a PTY session as the daemon describes it.
type ptyInfo struct {
	ID        string            `json:"id"`
	Cwd       string            `json:"cwd"`
	Envs      map[string]string `json:"envs"`
	Cols      uint16            `json:"cols"`
	Rows      uint16            `json:"rows"`
	CreatedAt time.Time         `json:"createdAt"`
	Active    bool              `json:"active"`
	LazyStart bool              `json:"lazyStart"`
}

// ptySession is one PTY session of a sandbox.
type ptySession struct {
	mu      sync.Mutex
	info    ptyInfo
	cmd     *exec.Cmd
	tty     *os.File
	clients map[*ptyClient]bool
	killed  bool
	taken   atomic.Int64  // bytes taken from the terminal
	sent    atomic.Int64  // of those, bytes handed to the clients
	drained chan struct{} // closed once the terminal has no writer left
	stop    chan struct{} // closed by kill
}

// ptyClient is one connected WebSocket.
type ptyClient struct {
	conn *websocket.Conn
	send chan []byte // output; a client that falls behind is dropped
	once sync.Once
	mu   sync.Mutex // one write at a time
}

func (c *ptyClient) close(code int, reason string) {
	c.once.Do(func() {
		c.mu.Lock()
		_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
		c.mu.Unlock()
		_ = c.conn.Close()
		close(c.send)
	})
}

// ptyError answers the PTY routes' error shape.
func ptyError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// createPTY is POST /process/pty {id, cols, rows, envs, cwd, lazyStart}.
func (s *Server) createPTY(w http.ResponseWriter, r *http.Request) {
	sb := sandboxOf(r)
	var req struct {
		ID        string            `json:"id"`
		Cols      *uint16           `json:"cols"`
		Rows      *uint16           `json:"rows"`
		Envs      map[string]string `json:"envs"`
		Cwd       string            `json:"cwd"`
		LazyStart bool              `json:"lazyStart"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		ptyError(w, http.StatusBadRequest, err.Error())
		return
	}
	switch {
	case req.ID == "":
		ptyError(w, http.StatusBadRequest, "session ID is required")
		return
	case req.Cols != nil && *req.Cols > 1000:
		ptyError(w, http.StatusBadRequest, "invalid value for cols - must be less than 1000")
		return
	case req.Rows != nil && *req.Rows > 1000:
		ptyError(w, http.StatusBadRequest, "invalid value for rows - must be less than 1000")
		return
	}
	info := ptyInfo{ID: req.ID, Cwd: req.Cwd, Envs: req.Envs, Cols: 80, Rows: 24, CreatedAt: time.Now().UTC(), LazyStart: req.LazyStart}
	if info.Cwd == "" {
		info.Cwd = home
	}
	if info.Envs == nil {
		info.Envs = map[string]string{}
	}
	if info.Envs["TERM"] == "" {
		info.Envs["TERM"] = "xterm-256color"
	}
	if req.Cols != nil {
		info.Cols = *req.Cols
	}
	if req.Rows != nil {
		info.Rows = *req.Rows
	}
	p := &ptySession{info: info, clients: map[*ptyClient]bool{}, drained: make(chan struct{}), stop: make(chan struct{})}
	sb.smu.Lock()
	if sb.ptys[req.ID] != nil {
		sb.smu.Unlock()
		ptyError(w, http.StatusConflict, fmt.Sprintf("PTY session with ID '%s' already exists", req.ID))
		return
	}
	sb.ptys[req.ID] = p
	sb.smu.Unlock()
	if !req.LazyStart {
		if err := s.startPTY(sb, p); err != nil {
			sb.forgetPTY(p)
			ptyError(w, http.StatusInternalServerError, "failed to start PTY session")
			return
		}
	}
	writeJSON(w, http.StatusCreated, map[string]string{"sessionId": req.ID})
}

// startPTY starts the session's shell on a terminal, once.
func (s *Server) startPTY(sb *sandbox, p *ptySession) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		if p.info.Active {
			return nil
		}
		return fmt.Errorf("PTY session has already been used and cannot be restarted")
	}
	if host, err := sb.resolve(p.info.Cwd); err != nil {
		return err
	} else if info, err := os.Stat(host); err != nil || !info.IsDir() {
		return fmt.Errorf("pty.StartWithSize: chdir %s: no such file or directory", p.info.Cwd)
	}
	cmd, err := s.shell(sb, p.info.Cwd, p.info.Envs, "-i", "-l")
	if err != nil {
		return err
	}
	tty, err := pty.StartWithAttrs(cmd, &pty.Winsize{Cols: p.info.Cols, Rows: p.info.Rows}, stubproc.TerminalAttr(cmd.SysProcAttr))
	if err != nil {
		return err
	}
	p.cmd, p.tty, p.info.Active = cmd, tty, true
	s.Go(func() { p.read() })
	s.Go(func() { s.reapPTY(sb, p) })
	return nil
}

// read broadcasts the terminal's output to the connected clients until
// no process holds the terminal any more (the read fails only once every
// byte written to it has been read).
func (p *ptySession) read() {
	defer close(p.drained)
	buf := make([]byte, 32<<10)
	for {
		n, err := p.tty.Read(buf)
		p.taken.Add(int64(n))
		if n > 0 {
			b := append([]byte(nil), buf[:n]...)
			p.mu.Lock()
			for c := range p.clients {
				select {
				case c.send <- b:
				default: // the daemon drops a client that falls behind
					delete(p.clients, c)
					go c.close(websocket.ClosePolicyViolation, "slow consumer")
				}
			}
			p.mu.Unlock()
			p.sent.Add(int64(n))
		}
		if err != nil {
			return
		}
	}
}

// handedOver waits until what the shell wrote before it ended has reached
// the clients while a job it left behind holds the terminal (so the
// reading never ends): nothing unread on the terminal, and all that was
// read handed over. The wait is bounded by settle (a job still writing
// keeps bytes coming): what it writes later reaches no one, as on the
// daemon.
func (p *ptySession) handedOver(settle time.Duration) {
	deadline := time.Now().Add(settle)
	for time.Now().Before(deadline) {
		unread, err := stubproc.TerminalUnread(p.tty)
		if err != nil || (unread == 0 && p.sent.Load() == p.taken.Load()) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// reapPTY waits for the shell and, unless a process it left behind still
// holds the terminal, for the last of the output; then it closes every
// client with the shell's end and forgets the session. Like the daemon, it
// ends the session when the shell exits: what processes left behind write
// later reaches no one.
func (s *Server) reapPTY(sb *sandbox, p *ptySession) {
	err := p.cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	} else if err != nil {
		code = 1
	}
	p.mu.Lock()
	p.info.Active = false
	p.mu.Unlock()
	if held, err := stubproc.TerminalHeld(p.tty); err == nil && !held {
		select { // the last of the output is on its way
		case <-p.drained:
		case <-p.stop:
		}
	} else {
		p.handedOver(2 * time.Second)
		sb.smu.Lock()
		sb.leftBehind = append(sb.leftBehind, p.cmd.Process.Pid)
		sb.smu.Unlock()
	}
	p.mu.Lock()
	killed := p.killed
	p.mu.Unlock()
	if !killed {
		p.end(code)
	}
	_ = p.tty.Close()
	sb.forgetPTY(p)
}

// end closes every client with the session's end.
func (p *ptySession) end(code int) {
	closeCode, reason := websocket.CloseNormalClosure, ""
	if code != 0 {
		closeCode = websocket.CloseInternalServerErr
		switch {
		case code == 130:
			reason = "Ctrl+C"
		case code == 137:
			reason = "SIGKILL"
		case code == 143:
			reason = "SIGTERM"
		case code > 128:
			reason = fmt.Sprintf("signal %d", code-128)
		default:
			reason = "non-zero exit"
		}
	}
	data := map[string]any{"exitCode": code}
	if reason != "" {
		data["exitReason"] = reason
	}
	b, _ := json.Marshal(data)
	p.mu.Lock()
	clients := p.clients
	p.clients = map[*ptyClient]bool{}
	p.mu.Unlock()
	for c := range clients {
		c.close(closeCode, string(b))
	}
}

// kill ends the session at once: its shell and every job it started get
// SIGKILL, its clients 137 SIGKILL.
func (p *ptySession) kill() {
	p.mu.Lock()
	if p.killed {
		p.mu.Unlock()
		return
	}
	p.killed = true
	started, active := p.cmd != nil, p.info.Active
	p.info.Active = false
	p.mu.Unlock()
	if !started {
		return
	}
	close(p.stop)
	if active {
		_ = stubproc.SignalSession(p.cmd.Process.Pid, syscall.SIGKILL)
	}
	p.end(137)
}

// killLeftBehind kills the jobs that ended PTY shells left running.
func (sb *sandbox) killLeftBehind() {
	sb.smu.Lock()
	left := sb.leftBehind
	sb.leftBehind = nil
	sb.smu.Unlock()
	for _, sid := range left {
		_ = stubproc.SignalSession(sid, syscall.SIGKILL)
	}
}

// forgetPTY removes p from its sandbox's sessions.
func (sb *sandbox) forgetPTY(p *ptySession) {
	sb.smu.Lock()
	defer sb.smu.Unlock()
	if sb.ptys[p.info.ID] == p {
		delete(sb.ptys, p.info.ID)
	}
}

// ptyOf is the request's PTY session, or nil.
func ptyOf(r *http.Request) *ptySession {
	sb := sandboxOf(r)
	sb.smu.Lock()
	defer sb.smu.Unlock()
	return sb.ptys[r.PathValue("pty")]
}

func (p *ptySession) describe() ptyInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.info
}

// listPTYs is GET /process/pty.
func (s *Server) listPTYs(w http.ResponseWriter, r *http.Request) {
	sb := sandboxOf(r)
	sb.smu.Lock()
	all := make([]*ptySession, 0, len(sb.ptys))
	for _, p := range sb.ptys {
		all = append(all, p)
	}
	sb.smu.Unlock()
	out := make([]ptyInfo, 0, len(all))
	for _, p := range all {
		out = append(out, p.describe())
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out})
}

// getPTY is GET /process/pty/{id}.
func (s *Server) getPTY(w http.ResponseWriter, r *http.Request) {
	if p := ptyOf(r); p != nil {
		writeJSON(w, http.StatusOK, p.describe())
		return
	}
	ptyError(w, http.StatusNotFound, "PTY session not found")
}

// deletePTY is DELETE /process/pty/{id}: the session is killed.
func (s *Server) deletePTY(w http.ResponseWriter, r *http.Request) {
	p := ptyOf(r)
	if p == nil {
		ptyError(w, http.StatusNotFound, "PTY session not found")
		return
	}
	sandboxOf(r).forgetPTY(p)
	p.kill()
	writeJSON(w, http.StatusOK, map[string]string{"message": "PTY session deleted"})
}

// resizePTY is POST /process/pty/{id}/resize {cols, rows}: the session's
// description, resized; 410 for a session that no longer runs.
func (s *Server) resizePTY(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Cols uint16 `json:"cols"`
		Rows uint16 `json:"rows"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		ptyError(w, http.StatusBadRequest, err.Error())
		return
	}
	switch {
	case req.Cols > 1000:
		ptyError(w, http.StatusBadRequest, "cols must be less than 1000")
		return
	case req.Rows > 1000:
		ptyError(w, http.StatusBadRequest, "rows must be less than 1000")
		return
	}
	p := ptyOf(r)
	if p == nil {
		ptyError(w, http.StatusGone, "PTY session not found")
		return
	}
	p.mu.Lock()
	if !p.info.Active {
		p.mu.Unlock()
		ptyError(w, http.StatusGone, "PTY session is not active")
		return
	}
	err := stubproc.SetTerminalSize(p.tty, req.Cols, req.Rows)
	if err == nil {
		p.info.Cols, p.info.Rows = req.Cols, req.Rows
	}
	info := p.info
	p.mu.Unlock()
	if err != nil {
		ptyError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, info)
}

// connectPTY is the WebSocket GET /process/pty/{id}/connect: a lazy
// session starts now; a missing one gets an error control message.
func (s *Server) connectPTY(w http.ResponseWriter, r *http.Request) {
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	p := ptyOf(r)
	err = fmt.Errorf("PTY session %s not found", r.PathValue("pty"))
	if p != nil {
		err = s.startPTY(sandboxOf(r), p)
	}
	if err != nil {
		_ = conn.WriteJSON(map[string]string{"type": "control", "status": "error", "error": "Failed to connect to PTY session: " + err.Error()})
		_ = conn.Close()
		return
	}
	c := &ptyClient{conn: conn, send: make(chan []byte, 256)}
	p.mu.Lock()
	if !p.info.Active {
		p.mu.Unlock()
		_ = conn.WriteJSON(map[string]string{"type": "control", "status": "error", "error": "Failed to connect to PTY session: it has ended"})
		_ = conn.Close()
		return
	}
	p.clients[c] = true
	tty := p.tty
	p.mu.Unlock()
	c.mu.Lock()
	_ = conn.WriteJSON(map[string]string{"type": "control", "status": "connected"})
	c.mu.Unlock()
	go func() { // the terminal's output to this client
		for b := range c.send {
			c.mu.Lock()
			err := conn.WriteMessage(websocket.BinaryMessage, b)
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	closeCode, closeReason := websocket.CloseNormalClosure, ""
	for { // this client's input to the terminal
		_, data, err := conn.ReadMessage()
		if err != nil {
			break
		}
		if _, err := tty.Write(data); err != nil {
			closeCode, closeReason = websocket.CloseInternalServerErr, "PTY session unavailable"
			break
		}
	}
	p.mu.Lock()
	delete(p.clients, c)
	p.mu.Unlock()
	c.close(closeCode, closeReason)
}
