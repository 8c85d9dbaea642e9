package spritestest

import (
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock/adapters/internal/drain"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// Stream ids of non-TTY binary frames.
const (
	idStdin    byte = 0
	idStdout   byte = 1
	idStderr   byte = 2
	idExit     byte = 3
	idStdinEOF byte = 4
)

// scrollbackLimit bounds a session's replay buffer; past it the oldest
// frames are dropped (Sprites does not document its own limit).
const scrollbackLimit = 16 << 20

// After the process exits, processes it left may still hold its pipes:
// they get exitGrace, then they are killed and the pipes are read to their
// end. One that outlives the kill for drainLimit leaves the output
// incomplete, and the session ends without an exit. The limit is generous
// because this server's own children hold every pipe of its between fork
// and exec: with hundreds of commands starting on a loaded 2-core machine
// (the conformance load case beside other suites), CI saw a finished
// command's pipe held that way past 5 s, and its output cut.
const (
	exitGrace  = 300 * time.Millisecond
	drainLimit = 30 * time.Second
)

// message is one WebSocket message queued for a client.
type message struct {
	kind  int // websocket.TextMessage or websocket.BinaryMessage
	data  []byte
	exit  bool // the session's exit: the client's socket ends after it
	abort bool // the session ended without an exit: the socket closes (1011), no data
}

// session is one command: a real process group, its scrollback, and the
// clients attached to it.
type session struct {
	s       *Server
	id      string
	tty     bool
	command string // the resolved path and the arguments
	workdir string // as the sprite sees it
	created time.Time
	maxRun  time.Duration // 0: it runs on with no client until it ends

	proc  *exec.Cmd
	stdin *os.File // the pipe to the process, or the pty master
	ptmx  *os.File

	mu           sync.Mutex
	scroll       []message
	scrollBytes  int
	clients      map[*client]bool
	hadOwner     bool
	lastActivity time.Time
	ended        bool
	exitCode     int
	undrained    bool // ended without an exit: its output could not be read to the end
	stdinClosed  bool
	detach       *time.Timer
	done         chan struct{} // closed once the exit is broadcast
}

// execParams are the parsed exec query parameters.
type execParams struct {
	argv    []string
	path    string
	env     []string // nil: the default environment
	dir     string
	tty     bool
	rows    uint16
	cols    uint16
	stdin   bool
	maxRun  time.Duration
	attach  string // the legacy ?id= form
	command string
}

// parseExec reads the exec parameters (spec 4.1); the error text is the
// 400 body.
func parseExec(q map[string][]string) (execParams, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	p := execParams{argv: q["cmd"], path: get("path"), dir: get("dir"), attach: get("id"), rows: 24, cols: 80}
	if e, ok := q["env"]; ok {
		p.env = []string{}
		for _, kv := range e {
			if !strings.Contains(kv, "=") {
				return p, errors.New("invalid env entry")
			}
			p.env = append(p.env, kv)
		}
	}
	var err error
	if v := get("tty"); v != "" {
		if p.tty, err = strconv.ParseBool(v); err != nil {
			return p, errors.New("invalid tty")
		}
	}
	p.stdin = p.tty
	if v := get("stdin"); v != "" {
		if p.stdin, err = strconv.ParseBool(v); err != nil {
			return p, errors.New("invalid stdin")
		}
	}
	for _, dim := range []struct {
		key string
		to  *uint16
	}{{"rows", &p.rows}, {"cols", &p.cols}} {
		if v := get(dim.key); v != "" {
			n, err := strconv.ParseUint(v, 10, 16)
			if err != nil || n == 0 {
				return p, errors.New("invalid " + dim.key)
			}
			*dim.to = uint16(n)
		}
	}
	if !p.tty {
		p.maxRun = 10 * time.Second
	}
	if v := get("max_run_after_disconnect"); v != "" {
		if v == "0" {
			p.maxRun = 0
		} else if p.maxRun, err = time.ParseDuration(v); err != nil || p.maxRun < 0 {
			return p, errors.New("invalid max_run_after_disconnect")
		}
	}
	if p.path == "" {
		if len(p.argv) > 0 {
			p.path = p.argv[0]
		} else {
			p.path = "bash"
		}
	}
	if len(p.argv) == 0 {
		p.argv = []string{p.path}
	}
	return p, nil
}

// defaultPath is the PATH of a sprite's default environment.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// pathOf is env's PATH, or the default one.
func pathOf(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	return defaultPath
}

// defaultEnv is a sprite's environment when exec gives none.
func defaultEnv(home string, tty bool) []string {
	env := []string{"PATH=" + defaultPath, "HOME=" + home,
		"USER=sprite", "LANG=C.UTF-8"}
	if tty {
		env = append(env, "TERM=xterm-256color")
	}
	return env
}

// startSession starts p in sp as a new session; a command that cannot
// start still makes a session, which reports it on stderr and exits 127
// (not found) or 126, as a shell would.
func (s *Server) startSession(sp *sprite, id string, p execParams) *session {
	ss := &session{s: s, id: id, tty: p.tty, workdir: p.dir, created: time.Now(), maxRun: p.maxRun,
		clients: map[*client]bool{}, lastActivity: time.Now(), done: make(chan struct{})}
	ss.workdir = cmp.Or(ss.workdir, spriteUser.Home)
	env := p.env
	if env == nil {
		env = defaultEnv(sp.space.Seen(spriteUser.Home), p.tty)
	}
	// The program as the sprite's shell finds it (a relative one from the
	// command's directory); the listing shows it resolved.
	resolved, err := sp.space.LookPath(p.path, pathOf(env), ss.workdir)
	ss.command = strings.Join(append([]string{resolved}, p.argv[1:]...), " ")
	if err != nil {
		ss.command = strings.Join(p.argv, " ")
	}
	s.mu.Lock()
	sp.sessions[id] = ss
	s.mu.Unlock()
	if err != nil {
		s.Go(func() { ss.failStart(p.path, err) })
		return ss
	}
	cmd, err := sp.space.Command(ss.workdir, spriteUser, resolved, p.argv[1:]...)
	if err != nil {
		s.Go(func() { ss.failStart(p.path, err) })
		return ss
	}
	cmd.Env = env
	if p.tty {
		ptmx, err := pty.StartWithAttrs(cmd, &pty.Winsize{Rows: p.rows, Cols: p.cols},
			stubproc.TerminalAttr(nil))
		if err != nil {
			s.Go(func() { ss.failStart(p.path, err) })
			return ss
		}
		ss.mu.Lock()
		ss.proc, ss.stdin, ss.ptmx = cmd, ptmx, ptmx
		ss.mu.Unlock()
		// The terminal is the command's controlling one: its exit hangs the
		// terminal up, so no leftover can hold the output (nothing is held).
		done := make(chan struct{})
		s.Go(func() { defer close(done); ss.pump(ptmx, 0) })
		s.Go(func() { ss.wait(pipes{files: []*os.File{ptmx}, done: done}) })
		return ss
	}
	inR, inW, err1 := os.Pipe()
	outR, outW, err2 := os.Pipe()
	errR, errW, err3 := os.Pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		s.Go(func() { ss.failStart(p.path, err) })
		return ss
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = stubproc.GroupAttr()
	held, err := heldObjects(outR, errR)
	if err == nil {
		err = cmd.Start()
	}
	closeAll(inR, outW, errW)
	if err != nil {
		closeAll(inW, outR, errR)
		s.Go(func() { ss.failStart(p.path, err) })
		return ss
	}
	ss.mu.Lock()
	ss.proc, ss.stdin = cmd, inW
	ss.mu.Unlock()
	if !p.stdin {
		ss.closeStdin()
	}
	var readers sync.WaitGroup
	readers.Add(2)
	s.Go(func() { defer readers.Done(); ss.pump(outR, idStdout) })
	s.Go(func() { defer readers.Done(); ss.pump(errR, idStderr) })
	done := make(chan struct{})
	s.Go(func() { readers.Wait(); close(done) })
	s.Go(func() { ss.wait(pipes{files: []*os.File{outR, errR}, held: held, done: done}) })
	return ss
}

// heldObjects are what a command writes to through the pipes whose read
// ends are files.
func heldObjects(files ...*os.File) ([]drain.Object, error) {
	var held []drain.Object
	for _, f := range files {
		o, err := drain.ObjectOf(f)
		if err != nil {
			return nil, err
		}
		held = append(held, o)
	}
	return held, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}

// pipes are a session's output as the server reads it.
type pipes struct {
	files []*os.File     // the read ends (or the terminal's master)
	held  []drain.Object // what the command's processes write to
	done  chan struct{}  // closed once every reader reached the end
}

// failStart reports a command that could not start.
func (ss *session) failStart(path string, err error) {
	code := 126
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		code = 127
	}
	ss.output(idStderr, []byte(path+": "+err.Error()+"\n"))
	ss.finish(code)
}

// pump reads one output of the process and broadcasts it.
func (ss *session) pump(r io.Reader, id byte) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			ss.output(id, append([]byte(nil), buf[:n]...))
		}
		if err != nil {
			return
		}
	}
}

// wait waits for the process to exit, reads its output to the end (the
// leftovers still holding it are killed after exitGrace; the process stays
// unreaped meanwhile, so its group id names nobody else), then broadcasts
// the exit, or ends the session without one if the output was cut.
func (ss *session) wait(p pipes) {
	pid := ss.proc.Process.Pid
	reaped := !drain.WaitExited(pid)
	if reaped {
		_ = ss.proc.Wait()
	}
	complete := drain.Drain(drain.Output{Files: p.files, Held: p.held, Done: p.done}, drain.Policy{
		Grace: exitGrace, Limit: drainLimit, KillGroup: func() { _ = stubproc.SignalGroup(pid, syscall.SIGKILL) }})
	if !reaped {
		_ = ss.proc.Wait()
	}
	code := exitCode(ss.proc.ProcessState)
	ss.mu.Lock()
	ss.stdinClosed = true
	ss.undrained = !complete
	ss.mu.Unlock()
	closeAll(p.files...)
	_ = ss.stdin.Close()
	ss.finish(code)
}

// exitCode is the process's code, or 128 + the signal that killed it.
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return 255
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if code := ps.ExitCode(); code >= 0 {
		return code & 0xff
	}
	return 255
}

// output records a chunk and sends it to every client.
func (ss *session) output(id byte, data []byte) {
	msg := message{kind: websocket.BinaryMessage, data: data}
	if !ss.tty {
		msg.data = append([]byte{id}, data...)
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.ended {
		return
	}
	ss.lastActivity = time.Now()
	ss.scroll = append(ss.scroll, msg)
	ss.scrollBytes += len(msg.data)
	for ss.scrollBytes > scrollbackLimit && len(ss.scroll) > 1 {
		ss.scrollBytes -= len(ss.scroll[0].data)
		ss.scroll = ss.scroll[1:]
	}
	for c := range ss.clients {
		c.send(msg)
	}
}

// exitMessage is the exit as the session's mode sends it (the caller
// holds ss.mu); a session whose output was cut has none.
func (ss *session) exitMessage() message {
	if ss.undrained {
		return message{abort: true}
	}
	if ss.tty {
		b, _ := json.Marshal(map[string]any{"type": "exit", "exit_code": ss.exitCode})
		return message{kind: websocket.TextMessage, data: b, exit: true}
	}
	return message{kind: websocket.BinaryMessage, data: []byte{idExit, byte(ss.exitCode)}, exit: true}
}

// finish ends the session: it leaves the sprite's list first (Sprites drops
// an ended session at once), then every client gets the exit.
func (ss *session) finish(code int) {
	ss.s.forget(ss)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.ended {
		return
	}
	ss.ended, ss.exitCode = true, code
	if ss.detach != nil {
		ss.detach.Stop()
	}
	msg := ss.exitMessage()
	for c := range ss.clients {
		c.send(msg)
	}
	close(ss.done)
}

// forget removes a session from its sprite's list.
func (s *Server) forget(ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range s.sprites {
		if sp.sessions[ss.id] == ss {
			delete(sp.sessions, ss.id)
			if _, last := ss.activity(); last.After(sp.lastActive) {
				sp.lastActive = last
			}
		}
	}
}

// subscribe adds c, queueing session_info, the scrollback and (for a
// session already ended) the exit, in one step so nothing is lost or sent
// twice between replay and live output.
func (ss *session) subscribe(c *client) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	owner := !ss.hadOwner
	ss.hadOwner = true
	info, _ := json.Marshal(map[string]any{"type": "session_info", "session_id": ss.id, "command": ss.command,
		"created": ss.created.Unix(), "cols": 0, "rows": 0, "is_owner": owner, "tty": ss.tty})
	c.tty, c.owner = ss.tty, owner
	c.send(message{kind: websocket.TextMessage, data: info})
	for _, m := range ss.scroll {
		c.send(m)
	}
	if ss.ended {
		c.send(ss.exitMessage())
		return
	}
	ss.clients[c] = true
	ss.lastActivity = time.Now()
	if ss.detach != nil {
		ss.detach.Stop()
		ss.detach = nil
	}
}

// unsubscribe removes c; the last client leaving starts the
// max_run_after_disconnect clock.
func (ss *session) unsubscribe(c *client) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.clients, c)
	if len(ss.clients) > 0 || ss.ended || ss.maxRun == 0 {
		return
	}
	ss.detach = time.AfterFunc(ss.maxRun, func() { ss.signal(syscall.SIGKILL) })
}

// activity reports whether a client is attached, and the last output or
// attachment.
func (ss *session) activity() (bool, time.Time) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.clients) > 0, ss.lastActivity
}

// writeStdin passes client input to the process; input after the exit or
// after the end of stdin is dropped.
func (ss *session) writeStdin(data []byte) {
	ss.mu.Lock()
	in := ss.stdin
	if ss.stdinClosed {
		in = nil
	}
	ss.lastActivity = time.Now()
	ss.mu.Unlock()
	if in != nil {
		_, _ = in.Write(data)
	}
}

// closeStdin ends the process's input (non-TTY).
func (ss *session) closeStdin() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.stdinClosed || ss.stdin == nil || ss.tty {
		return
	}
	ss.stdinClosed = true
	_ = ss.stdin.Close()
}

// resize sets the terminal size (TTY).
func (ss *session) resize(rows, cols uint16) {
	ss.mu.Lock()
	ptmx := ss.ptmx
	ss.mu.Unlock()
	if ptmx != nil && rows > 0 && cols > 0 {
		_ = stubproc.SetTerminalSize(ptmx, cols, rows)
	}
}

// signal sends sig to the session's process group.
func (ss *session) signal(sig syscall.Signal) {
	ss.mu.Lock()
	proc, ended := ss.proc, ss.ended
	ss.mu.Unlock()
	if proc == nil || proc.Process == nil || ended {
		return
	}
	_ = stubproc.SignalGroup(proc.Process.Pid, sig)
}

// pid is the process id the kill stream reports.
func (ss *session) pid() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.proc != nil && ss.proc.Process != nil {
		return ss.proc.Process.Pid
	}
	n, _ := strconv.Atoi(ss.id)
	return n
}

// shutdown kills the session and waits for its exit to be broadcast.
func (ss *session) shutdown() {
	ss.signal(syscall.SIGKILL)
	<-ss.done
}

// entry renders the session as the list does.
func (ss *session) entry() map[string]any {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return map[string]any{"id": ss.id, "command": ss.command, "workdir": ss.workdir,
		"created": ss.created.UTC().Format(time.RFC3339), "bytes_per_second": 0.0,
		"is_active": len(ss.clients) > 0, "last_activity": ss.lastActivity.UTC().Format(time.RFC3339), "tty": ss.tty}
}

// sessionList is the sprite's sessions; the caller holds s.mu.
func (sp *sprite) sessionList() []*session {
	out := make([]*session, 0, len(sp.sessions))
	for _, ss := range sp.sessions {
		out = append(out, ss)
	}
	return out
}

// signalNamed maps the kill and signal spellings (SIGTERM or TERM).
func signalNamed(name string) (syscall.Signal, string, bool) {
	name = strings.TrimPrefix(strings.ToUpper(name), "SIG")
	sigs := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL, "INT": syscall.SIGINT,
		"HUP": syscall.SIGHUP, "QUIT": syscall.SIGQUIT, "USR1": stubproc.SIGUSR1, "USR2": stubproc.SIGUSR2}
	sig, ok := sigs[name]
	return sig, "SIG" + name, ok
}
