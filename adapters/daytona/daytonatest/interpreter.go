package daytonatest

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock/adapters/internal/stubfs"
)

// workerScript is the interpreter's worker: a Python process per context
// keeping its globals (this server's own, speaking the daemon's protocol
// to it).
//
//go:embed interpreter_worker.py
var workerScript []byte

// workerPath is where the daemon puts its worker in the sandbox.
const workerPath = "/tmp/daytona_repl_worker.py"

// The interpreter's bounds, as the daemon's: the default execution
// timeout, the grace between the interrupt and the kill, and the close
// code of a timed-out execution.
const (
	interpreterTimeout = 10 * time.Minute
	interruptGrace     = 2 * time.Second
	closeTimeout       = 4008
)

// interpreter is one code interpreter context of a sandbox: a Python
// worker and the executions waiting for it, one at a time.
type interpreter struct {
	id, cwd, language string
	created           time.Time

	mu     sync.Mutex
	cmd    *exec.Cmd      // the worker; nil when not running
	stdin  io.WriteCloser // its command lines
	chunks chan map[string]any
	jobs   chan interpreterJob
	ended  chan struct{} // closed by stop: chunks nobody will read are dropped
}

// interpreterJob is one execution, answered on its socket.
type interpreterJob struct {
	code    string
	envs    map[string]string
	timeout time.Duration
	conn    *websocket.Conn
}

func newInterpreter(id, cwd, language string) *interpreter {
	return &interpreter{id: id, cwd: cwd, language: language, created: time.Now().UTC(), ended: make(chan struct{})}
}

// info is the context as the daemon describes it.
func (it *interpreter) info() map[string]any {
	it.mu.Lock()
	defer it.mu.Unlock()
	return map[string]any{"id": it.id, "cwd": it.cwd, "createdAt": it.created.Format(time.RFC3339Nano),
		"active": it.cmd != nil, "language": it.language}
}

// start runs the context's worker unless it runs (the caller holds it.mu).
func (s *Server) startWorker(sb *sandbox, it *interpreter) error {
	if it.cmd != nil {
		return nil
	}
	host, err := sb.space.Path(workerPath)
	if err == nil {
		err = os.WriteFile(host, workerScript, 0o700)
	}
	if err == nil {
		err = stubfs.Chown(host, daytona) // the daemon's, as the daemon runs as daytona
	}
	if err != nil {
		return fmt.Errorf("failed to create worker script: %w", err)
	}
	cmd, stdin, stdout, err := sb.startPiped(inside(it.cwd), "python3", workerPath)
	if err != nil {
		return fmt.Errorf("failed to start Python worker: %w", err)
	}
	chunks := make(chan map[string]any, 64)
	it.cmd, it.stdin, it.chunks = cmd, stdin, chunks
	s.Go(func() {
		lines := bufio.NewScanner(stdout)
		lines.Buffer(make([]byte, 64<<10), 1<<20)
		for lines.Scan() {
			var chunk map[string]any
			if json.Unmarshal(lines.Bytes(), &chunk) != nil {
				continue
			}
			select {
			case chunks <- chunk:
			case <-it.ended:
			}
		}
		_ = cmd.Wait()
		it.mu.Lock()
		if it.cmd == cmd {
			it.cmd, it.stdin = nil, nil
		}
		it.mu.Unlock()
		close(chunks)
	})
	return nil
}

// interpreterContext finds context id of sandbox sb ("default" is made
// when first asked for), its worker started again if it ended.
func (s *Server) interpreterContext(sb *sandbox, id string) (*interpreter, error) {
	sb.smu.Lock()
	it := sb.interpreters[id]
	if it == nil && id == "default" {
		it = newInterpreter("default", home, "python")
		sb.interpreters[id] = it
	}
	sb.smu.Unlock()
	if it == nil {
		return nil, fmt.Errorf("context with ID '%s' not found", id)
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	if err := s.startWorker(sb, it); err != nil {
		return nil, fmt.Errorf("failed to restart context '%s': %w", id, err)
	}
	return it, nil
}

// createInterpreter is POST /process/interpreter/context {cwd, language}:
// a python context (no other language), its worker started.
func (s *Server) createInterpreter(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Cwd      *string `json:"cwd"`
		Language *string `json:"language"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		toolboxError(w, r, http.StatusBadRequest, "BAD_REQUEST", "invalid request payload: "+err.Error())
		return
	}
	language, cwd := "python", home
	if req.Language != nil {
		language = *req.Language
	}
	if req.Cwd != nil {
		cwd = *req.Cwd
	}
	if language != "python" {
		toolboxError(w, r, http.StatusBadRequest, "BAD_REQUEST", fmt.Sprintf("unsupported language: %s (only 'python' is supported currently)", language))
		return
	}
	sb := sandboxOf(r)
	it := newInterpreter(newID(), cwd, language)
	it.mu.Lock()
	err := s.startWorker(sb, it)
	it.mu.Unlock()
	if err != nil {
		toolboxError(w, r, http.StatusInternalServerError, "INTERNAL_SERVER_ERROR", "failed to start context: "+err.Error())
		return
	}
	sb.smu.Lock()
	sb.interpreters[it.id] = it
	sb.smu.Unlock()
	writeJSON(w, http.StatusOK, it.info())
}

// listInterpreters is GET /process/interpreter/context: every context but
// the default one.
func (s *Server) listInterpreters(w http.ResponseWriter, r *http.Request) {
	sb := sandboxOf(r)
	sb.smu.Lock()
	var all []*interpreter
	for id, it := range sb.interpreters {
		if id != "default" {
			all = append(all, it)
		}
	}
	sb.smu.Unlock()
	slices.SortFunc(all, func(a, b *interpreter) int { return a.created.Compare(b.created) })
	out := []map[string]any{}
	for _, it := range all {
		out = append(out, it.info())
	}
	writeJSON(w, http.StatusOK, map[string]any{"contexts": out})
}

// deleteInterpreter is DELETE /process/interpreter/context/{id}: the
// worker ends; the default context may not be deleted.
func (s *Server) deleteInterpreter(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if id == "default" {
		toolboxError(w, r, http.StatusBadRequest, "BAD_REQUEST", "cannot delete default context")
		return
	}
	sb := sandboxOf(r)
	sb.smu.Lock()
	it := sb.interpreters[id]
	delete(sb.interpreters, id)
	sb.smu.Unlock()
	if it == nil {
		toolboxError(w, r, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("context with ID '%s' not found", id))
		return
	}
	it.stop()
	writeJSON(w, http.StatusOK, map[string]string{"message": "Context deleted successfully"})
}

// stop ends the context's worker and what waits for it.
func (it *interpreter) stop() {
	it.mu.Lock()
	cmd, jobs := it.cmd, it.jobs
	it.jobs = nil
	select {
	case <-it.ended:
	default:
		close(it.ended)
	}
	it.mu.Unlock()
	if jobs != nil {
		close(jobs)
	}
	if cmd != nil {
		_ = cmd.Process.Kill()
	}
}

// closeWith ends an execution's socket with a close frame.
func closeWith(conn *websocket.Conn, code int, reason string) {
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(10*time.Second))
	_ = conn.Close()
}

// executeCode is the WebSocket GET /process/interpreter/execute: the
// first message is {code, contextId, envs, timeout}; the context's
// executions run one at a time, each chunk sent as the daemon's output
// message, then a normal close (4008 when the timeout interrupted it, the
// worker killed if the interrupt did not stop it within two seconds).
func (s *Server) executeCode(w http.ResponseWriter, r *http.Request) {
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	_, payload, err := conn.ReadMessage()
	if err != nil {
		closeWith(conn, websocket.CloseProtocolError, "failed to read first message")
		return
	}
	var req struct {
		Code      string             `json:"code"`
		ContextID *string            `json:"contextId"`
		Timeout   *int64             `json:"timeout"`
		Envs      *map[string]string `json:"envs"`
	}
	if json.Unmarshal(payload, &req) != nil {
		closeWith(conn, websocket.CloseProtocolError, "invalid JSON payload")
		return
	}
	timeout := interpreterTimeout
	switch {
	case req.Code == "":
		closeWith(conn, websocket.ClosePolicyViolation, "code is required")
		return
	case req.Timeout != nil && *req.Timeout < 0:
		closeWith(conn, websocket.ClosePolicyViolation, "timeout must be greater than or equal to 0")
		return
	case req.Timeout != nil:
		timeout = time.Duration(*req.Timeout) * time.Second
	}
	id := "default"
	if req.ContextID != nil {
		id = *req.ContextID
	}
	it, err := s.interpreterContext(sandboxOf(r), id)
	if err != nil {
		if id == "default" {
			closeWith(conn, websocket.CloseInternalServerErr, "failed to get default context: "+err.Error())
		} else {
			closeWith(conn, websocket.ClosePolicyViolation, "context not found: "+id)
		}
		return
	}
	job := interpreterJob{code: req.Code, timeout: timeout, conn: conn}
	if req.Envs != nil {
		job.envs = *req.Envs
	}
	it.mu.Lock()
	if it.jobs == nil {
		it.jobs = make(chan interpreterJob, 128)
		jobs := it.jobs
		s.Go(func() {
			for j := range jobs {
				it.run(j)
			}
		})
	}
	jobs := it.jobs
	it.mu.Unlock()
	select {
	case jobs <- job:
	default:
		closeWith(conn, websocket.CloseTryAgainLater, "too many executions waiting")
	}
}

// outputMessage is one chunk as the daemon sends it, every field present.
type outputMessage struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Name      string `json:"name"`
	Value     string `json:"value"`
	Traceback string `json:"traceback"`
}

// run sends one execution to the worker and its chunks to the socket.
func (it *interpreter) run(j interpreterJob) {
	it.mu.Lock()
	cmd, stdin, chunks := it.cmd, it.stdin, it.chunks
	it.mu.Unlock()
	if cmd == nil {
		closeWith(j.conn, websocket.CloseGoingAway, "worker process ended")
		return
	}
	line, _ := json.Marshal(map[string]any{"id": newID(), "code": j.code, "envs": j.envs})
	if _, err := stdin.Write(append(line, '\n')); err != nil {
		closeWith(j.conn, websocket.CloseGoingAway, "worker process ended")
		return
	}
	var deadline <-chan time.Time
	if j.timeout > 0 {
		t := time.NewTimer(j.timeout)
		defer t.Stop()
		deadline = t.C
	}
	var grace <-chan time.Time
	timedOut := false
	for {
		select {
		case chunk, ok := <-chunks:
			if !ok {
				code, reason := websocket.CloseGoingAway, "worker process ended"
				if timedOut {
					code, reason = closeTimeout, ""
				}
				closeWith(j.conn, code, reason)
				return
			}
			text := func(k string) string { v, _ := chunk[k].(string); return v }
			out := outputMessage{Type: text("type"), Text: text("text"), Name: text("name"), Value: text("value"), Traceback: text("traceback")}
			_ = j.conn.WriteJSON(out)
			if out.Type == "control" && (out.Text == "completed" || out.Text == "interrupted") {
				code := websocket.CloseNormalClosure
				if timedOut || out.Text == "interrupted" {
					code = closeTimeout
				}
				closeWith(j.conn, code, "")
				return
			}
		case <-deadline:
			deadline, timedOut = nil, true
			_ = cmd.Process.Signal(syscall.SIGINT)
			t := time.NewTimer(interruptGrace)
			defer t.Stop()
			grace = t.C
		case <-grace:
			grace = nil
			_ = cmd.Process.Kill()
		}
	}
}

// stopInterpreters ends every context of the sandbox.
func (sb *sandbox) stopInterpreters() {
	for _, it := range takeAll(&sb.smu, &sb.interpreters) {
		it.stop()
	}
}
