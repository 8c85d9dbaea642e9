package daytonatest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// The toolbox: each sandbox's daemon behind the proxy at
// /toolbox/{id}/..., running real processes in the sandbox's filesystem
// (stubfs) as the sandbox's user, daytona, whose home is /home/daytona.

// daytona is the user the daemon and its commands run as.
var daytona = stubfs.User{Name: "daytona", UID: 1000, GID: 1000, Home: "/home/daytona"}

// users are a sandbox's users.
var users = []stubfs.User{{Name: "root", Home: "/root"}, daytona}

// home is the sandbox user's home inside a sandbox.
const home = "/home/daytona"

// toolboxRoute is a toolbox route as requests record it: "TOOLBOX " and
// the daemon's own pattern.
func toolboxRoute(pattern string) string { return "TOOLBOX " + pattern }

// toolboxHandler serves every sandbox's daemon; the sandbox comes with
// the request's context.
func (s *Server) toolboxHandler() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, h http.HandlerFunc) {
		route := toolboxRoute(pattern)
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if s.Fault(route, -1, w, r) {
				return
			}
			h(w, r)
		})
	}
	handle("POST /process/execute", s.execute)
	handle("POST /process/code-run", s.codeRun)
	handle("POST /process/session", s.createSession)
	handle("GET /process/session", s.listSessions)
	handle("GET /process/session/{session}", s.getSession)
	handle("DELETE /process/session/{session}", s.deleteSession)
	handle("POST /process/session/{session}/exec", s.sessionExec)
	handle("GET /process/session/{session}/command/{command}", s.getCommand)
	handle("POST /process/session/{session}/command/{command}/input", s.sendInput)
	handle("GET /process/session/{session}/command/{command}/logs", s.logs)
	handle("POST /files/upload", s.upload)
	handle("GET /files/download", s.download)
	handle("POST /files/bulk-upload", s.bulkUpload)
	handle("POST /files/bulk-download", s.bulkDownload)
	handle("GET /files", s.listFiles)
	handle("GET /files/info", s.fileInfo)
	handle("POST /files/folder", s.createFolder)
	handle("POST /files/move", s.moveFile)
	handle("POST /files/permissions", s.setPermissions)
	handle("DELETE /files", s.deleteFile)
	handle("GET /files/find", s.findInFiles)
	handle("GET /files/search", s.searchFiles)
	handle("POST /files/replace", s.replaceInFiles)
	handle("GET /user-home-dir", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"dir": home})
	})
	handle("GET /work-dir", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"dir": home})
	}) // the home when the image sets no workdir
	handle("POST /process/pty", s.createPTY)
	handle("GET /process/pty", s.listPTYs)
	handle("GET /process/pty/{pty}", s.getPTY)
	handle("DELETE /process/pty/{pty}", s.deletePTY)
	handle("POST /process/pty/{pty}/resize", s.resizePTY)
	handle("GET /process/pty/{pty}/connect", s.connectPTY)
	handle("GET /git/branches", gitGet(gitBranches))
	handle("GET /git/history", gitGet(gitHistory))
	handle("GET /git/status", gitGet(gitStatus))
	handle("POST /git/add", gitPost(http.StatusOK, gitAdd))
	handle("POST /git/branches", gitPost(http.StatusCreated, gitCreateBranch))
	handle("POST /git/checkout", gitPost(http.StatusOK, gitCheckout))
	handle("DELETE /git/branches", gitPost(http.StatusNoContent, gitDeleteBranch))
	handle("POST /git/clone", gitPost(http.StatusOK, gitClone))
	handle("POST /git/commit", gitPost(http.StatusOK, gitCommit))
	handle("POST /git/pull", gitPost(http.StatusOK, gitPull))
	handle("POST /git/push", gitPost(http.StatusOK, gitPush))
	handle("POST /process/interpreter/context", s.createInterpreter)
	handle("GET /process/interpreter/context", s.listInterpreters)
	handle("DELETE /process/interpreter/context/{id}", s.deleteInterpreter)
	handle("GET /process/interpreter/execute", s.executeCode)
	handle("GET /process/session/entrypoint", s.entrypoint)
	handle("GET /process/session/entrypoint/logs", s.entrypointLogs)
	handle("POST /lsp/start", s.lspStart)
	handle("POST /lsp/stop", s.lspStop)
	handle("POST /lsp/completions", s.lspCompletions)
	handle("POST /lsp/did-open", s.lspDidOpen)
	handle("POST /lsp/did-close", s.lspDidClose)
	handle("GET /lsp/document-symbols", s.lspDocumentSymbols)
	handle("GET /lsp/workspacesymbols", s.lspWorkspaceSymbols)
	for _, pattern := range computerUsePluginRoutes {
		handle(pattern, noComputerUse)
	}
	handle("POST /computeruse/recordings/start", s.startRecording)
	handle("POST /computeruse/recordings/stop", s.stopRecording)
	handle("GET /computeruse/recordings", s.listRecordings)
	handle("GET /computeruse/recordings/{id}", s.getRecording)
	handle("GET /computeruse/recordings/{id}/download", s.downloadRecording)
	handle("DELETE /computeruse/recordings/{id}", s.deleteRecording)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, "404 page not found")
	})
	return mux
}

type sandboxKey struct{}

func sandboxOf(r *http.Request) *sandbox { return r.Context().Value(sandboxKey{}).(*sandbox) }

// toolbox routes /toolbox/{id}/...: the proxy checks the key, and a
// sandbox that is not started answers 502 with no body.
func (s *Server) toolbox(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rest := "/" + r.PathValue("rest")
	body, r := peek(r)
	s.mu.Lock()
	sb := s.find(id)
	started := sb != nil && sb.id == id && !sb.deleted && sb.state == "started"
	s.mu.Unlock()
	route := r.Method + " " + rest
	if pattern := s.matchToolbox(r, rest); pattern != "" {
		route = toolboxRoute(pattern)
	}
	s.Record(route, r, body)
	if r.Header.Get("Authorization") != "Bearer "+s.key {
		apiError(w, r, http.StatusUnauthorized, "Unauthorized")
		return
	}
	if !started {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	inner := r.Clone(context.WithValue(r.Context(), sandboxKey{}, sb))
	inner.URL.Path, inner.URL.RawPath = rest, ""
	s.toolboxMux.ServeHTTP(w, inner)
}

// matchToolbox is the daemon pattern a toolbox request matches, or "".
func (s *Server) matchToolbox(r *http.Request, rest string) string {
	probe := r.Clone(r.Context())
	probe.URL.Path, probe.URL.RawPath = rest, ""
	_, pattern := s.toolboxMux.(*http.ServeMux).Handler(probe)
	if pattern == "/" {
		return ""
	}
	return pattern
}

// peek reads a small request body for the log and puts it back; an upload
// is logged empty and left alone.
func peek(r *http.Request) ([]byte, *http.Request) {
	if r.ContentLength < 0 || r.ContentLength > 1<<20 || strings.Contains(r.URL.Path, "/files/") {
		return nil, r
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, r
}

// toolboxError answers the daemon's error body.
func toolboxError(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"statusCode": status, "message": msg, "code": code,
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "path": r.URL.Path, "method": r.Method})
}

// degenerate answers the 500 body of a wrapped service error: no code, no
// method, a zero timestamp, an empty path.
func degenerate(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusInternalServerError, map[string]any{"statusCode": 500, "message": msg,
		"timestamp": "0001-01-01T00:00:00Z", "path": ""})
}

// inside is the sandbox path p names: relative paths are under the home.
func inside(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = home + "/" + p
	}
	return path.Clean(p)
}

// resolve is where this machine reaches the file sandbox path p names.
func (sb *sandbox) resolve(p string) (string, error) { return sb.space.Path(inside(p)) }

// shell is a process running a shell in the sandbox as daytona, in its
// own process group: the script comes on its stdin when script is set, as
// the daemon feeds it.
func (s *Server) shell(sb *sandbox, cwd string, envs map[string]string, args ...string) (*exec.Cmd, error) {
	dir := home
	if cwd != "" {
		dir = inside(cwd)
	}
	shell := "/bin/sh"
	if _, err := os.Stat("/bin/bash"); err == nil {
		shell = "/bin/bash"
	}
	cmd, err := sb.space.Command(dir, daytona, shell, args...)
	if err != nil {
		return nil, err
	}
	cmd.Env = sb.daytonaEnv()
	for k, v := range envs {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd, nil
}

// startPiped starts argv in the sandbox as daytona, from cwd, with
// daytona's environment, its stdin and stdout piped to the caller (for
// the workers the daemon speaks to: interpreters, language servers).
func (sb *sandbox) startPiped(cwd string, argv ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	cmd, err := sb.space.Command(cwd, daytona, argv[0], argv[1:]...)
	if err != nil {
		return nil, nil, nil, err
	}
	cmd.Env = sb.daytonaEnv()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, stdin, stdout, nil
}

// daytonaEnv is the environment of what the daemon starts: daytona's,
// then the sandbox's own (the create's env, which Daytona gives the
// container, so the daemon and all it starts inherit it).
func (sb *sandbox) daytonaEnv() []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + sb.space.Seen(home), "USER=daytona", "LANG=C.UTF-8"}
	for _, k := range slices.Sorted(maps.Keys(sb.env)) {
		env = append(env, k+"="+sb.env[k])
	}
	return env
}

// execute is POST /process/execute: the command is the shell's stdin,
// stdout and stderr share one pipe, a timeout (seconds) kills the group
// and answers 408 without the output.
func (s *Server) execute(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Command string            `json:"command"`
		Cwd     string            `json:"cwd"`
		Timeout int               `json:"timeout"`
		Envs    map[string]string `json:"envs"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		toolboxError(w, r, http.StatusBadRequest, "BAD_REQUEST", "bad request: invalid request body: "+err.Error())
		return
	}
	switch {
	case req.Command == "":
		toolboxError(w, r, http.StatusBadRequest, "BAD_REQUEST", "bad request: invalid request body: Key: 'ExecuteRequest.Command' Error:Field validation for 'Command' failed on the 'required' tag")
		return
	case strings.TrimSpace(req.Command) == "":
		toolboxError(w, r, http.StatusBadRequest, "BAD_REQUEST", "bad request: command cannot be empty or whitespace-only")
		return
	}
	if !envsValid(w, r, req.Envs) {
		return
	}
	sb := sandboxOf(r)
	if req.Cwd != "" {
		host, err := sb.resolve(req.Cwd)
		if info, serr := os.Stat(host); err != nil || serr != nil || !info.IsDir() {
			writeJSON(w, http.StatusOK, map[string]any{"exitCode": -1, "result": "fork/exec /usr/bin/bash: no such file or directory"})
			return
		}
	}
	if code, out, ok := s.runScript(w, r, sb, req.Cwd, req.Envs, req.Command, req.Timeout); ok {
		writeJSON(w, http.StatusOK, map[string]any{"exitCode": code, "result": string(out)})
	}
}

// envsValid answers the daemon's 400 for an environment variable name
// that is not one; false when it has.
func envsValid(w http.ResponseWriter, r *http.Request, envs map[string]string) bool {
	for k := range envs {
		if !validEnvName(k) {
			toolboxError(w, r, http.StatusBadRequest, "BAD_REQUEST", fmt.Sprintf("bad request: invalid environment variable name: '%s'", k))
			return false
		}
	}
	return true
}

// runScript runs script on a shell's stdin in the sandbox, stdout and
// stderr sharing one pipe, as the daemon runs execute's and code-run's: a
// start failure is exit -1 with its message, a timeout (seconds) kills the
// group and answers 408 without the output. ok is false when it has
// answered (the timeout, or the server closing).
func (s *Server) runScript(w http.ResponseWriter, r *http.Request, sb *sandbox, cwd string, envs map[string]string, script string, timeout int) (code int, out []byte, ok bool) {
	cmd, err := s.shell(sb, cwd, envs)
	if err != nil {
		return -1, []byte(err.Error()), true
	}
	cmd.Stdin = strings.NewReader(script)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		return -1, []byte(err.Error()), true
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var limit <-chan time.Time
	if timeout > 0 {
		limit = time.After(time.Duration(timeout) * time.Second)
	}
	select {
	case <-done:
	case <-limit:
		_ = stubproc.SignalGroup(cmd.Process.Pid, syscall.SIGKILL)
		<-done
		toolboxError(w, r, http.StatusRequestTimeout, "REQUEST_TIMEOUT", "request timeout: command execution timeout")
		return 0, nil, false
	case <-s.Closing():
		_ = stubproc.SignalGroup(cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return 0, nil, false
	}
	return cmd.ProcessState.ExitCode(), buf.Bytes(), true
}

// validEnvName is a POSIX environment variable name.
func validEnvName(k string) bool {
	if k == "" || (k[0] >= '0' && k[0] <= '9') {
		return false
	}
	for _, c := range k {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Journal markers.
var (
	stdoutMarker = []byte{1, 1, 1}
	stderrMarker = []byte{2, 2, 2}
)

// session is one daemon session: its commands run one after another.
type session struct {
	id       string
	mu       sync.Mutex // commands, deleted, shell
	commands map[string]*command
	turn     sync.Mutex // held by the running command
	gone     chan struct{}
	deleted  bool
	shell    *sessionShell // started with the first command (shell.go)
}

// command is one command of a session and its journal.
type command struct {
	id, text string
	suppress bool
	mu       sync.Mutex
	log      bytes.Buffer // output.log
	exitCode *int         // set once the journal is whole
	observed bool         // someone read the exit code
	stdin    io.WriteCloser
	pgid     int
	started  chan struct{} // closed once the process runs (or could not)
	noExit   bool          // the exit code is never recorded (WithholdExits)
	done     chan struct{}
}

func (c *command) append(marker, line []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log.Write(marker)
	c.log.Write(line)
}

// journal is the journal so far and whether the exit code exists.
func (c *command) journal() ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.log.Bytes()...), c.exitCode != nil
}

// since is the journal from offset on, and whether the exit code exists.
func (c *command) since(offset int) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.log.Bytes()
	if offset > len(b) {
		offset = len(b)
	}
	return append([]byte(nil), b[offset:]...), c.exitCode != nil
}

// record is the command record; reading it observes the exit code.
func (c *command) record() map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]any{"id": c.id, "command": c.text}
	if c.exitCode != nil {
		m["exitCode"] = *c.exitCode
		c.observed = true
	}
	return m
}

// The entrypoint session: the daemon's record of the sandbox's entrypoint,
// here the default snapshot's, which runs for good and logs nothing.
const (
	entrypointCommandID = "entrypoint_command"
	entrypointCommand   = "sleep infinity"
)

// entrypoint is GET /process/session/entrypoint.
func (s *Server) entrypoint(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"sessionId": "entrypoint",
		"commands": []map[string]any{{"id": entrypointCommandID, "command": entrypointCommand}}})
}

// entrypointLogs is GET /process/session/entrypoint/logs: never stripped
// of its markers, JSON for an SDK version >= 0.167.0.
func (s *Server) entrypointLogs(w http.ResponseWriter, r *http.Request) {
	v := logView{"text/plain; charset=utf-8", nil}
	if newSDK(r.Header.Get("X-Daytona-SDK-Version")) {
		v = logsFor(r, nil)
	}
	w.Header().Set("Content-Type", v.contentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(v.text)
}

// sessionOf finds a session of the request's sandbox.
func sessionOf(r *http.Request) *session {
	sb := sandboxOf(r)
	sb.smu.Lock()
	defer sb.smu.Unlock()
	return sb.sessions[r.PathValue("session")]
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	var req struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.SessionID == "" {
		toolboxError(w, r, http.StatusBadRequest, "INVALID_REQUEST_BODY", "invalid request body")
		return
	}
	if req.SessionID == "entrypoint" {
		toolboxError(w, r, http.StatusBadRequest, "BAD_REQUEST", "bad request: session ID is reserved")
		return
	}
	sb := sandboxOf(r)
	sb.smu.Lock()
	defer sb.smu.Unlock()
	if sb.sessions[req.SessionID] != nil {
		toolboxError(w, r, http.StatusConflict, "CONFLICT", "conflict: session already exists")
		return
	}
	sb.sessions[req.SessionID] = &session{id: req.SessionID, commands: map[string]*command{}, gone: make(chan struct{})}
	w.WriteHeader(http.StatusCreated)
}

// view is a session as the daemon answers it (commands in no set order).
func (ss *session) view() map[string]any {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	cmds := []map[string]any{}
	for _, c := range ss.commands {
		cmds = append(cmds, c.record())
	}
	return map[string]any{"sessionId": ss.id, "commands": cmds}
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	sb := sandboxOf(r)
	sb.smu.Lock()
	all := make([]*session, 0, len(sb.sessions))
	for _, ss := range sb.sessions {
		all = append(all, ss)
	}
	sb.smu.Unlock()
	out := []map[string]any{}
	for _, ss := range all {
		out = append(out, ss.view())
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	ss := sessionOf(r)
	if ss == nil {
		toolboxError(w, r, http.StatusNotFound, "NOT_FOUND", "not found: session not found")
		return
	}
	writeJSON(w, http.StatusOK, ss.view())
}

// deleteSession kills the session's processes and forgets it (its logs
// go with it).
func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	sb := sandboxOf(r)
	sb.smu.Lock()
	ss := sb.sessions[r.PathValue("session")]
	delete(sb.sessions, r.PathValue("session"))
	sb.smu.Unlock()
	if ss == nil {
		toolboxError(w, r, http.StatusNotFound, "NOT_FOUND", "not found: session not found")
		return
	}
	ss.kill()
	w.WriteHeader(http.StatusNoContent)
}

// kill ends the session: its shell's group gets SIGKILL.
func (ss *session) kill() {
	ss.mu.Lock()
	if !ss.deleted {
		ss.deleted = true
		close(ss.gone)
	}
	ss.mu.Unlock()
	ss.killShell()
}

// sessionExec is POST …/exec: async answers 202 with the command id at
// once; sync waits for the exit. The command runs after the session's
// earlier ones.
func (s *Server) sessionExec(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Command  string `json:"command"`
		RunAsync bool   `json:"runAsync"`
		Async    bool   `json:"async"`
		Suppress bool   `json:"suppressInputEcho"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Command == "" {
		w.WriteHeader(http.StatusBadRequest) // the daemon's empty 400
		return
	}
	ss := sessionOf(r)
	if ss == nil {
		degenerate(w, "failed to execute command: not found: session not found")
		return
	}
	c := &command{id: newID(), text: req.Command, suppress: req.Suppress, started: make(chan struct{}), done: make(chan struct{}),
		noExit: s.take(&s.noExits)}
	ss.mu.Lock()
	ss.commands[c.id] = c
	dead := ss.shell != nil && ss.shell.dead.Load()
	ss.mu.Unlock()
	if dead { // the command is listed all the same, and never runs
		degenerate(w, "failed to execute command: bad request: failed to write command: write |1: broken pipe")
		return
	}
	async := req.RunAsync || req.Async
	s.Go(func() { s.run(sandboxOf(r), ss, c, async) })
	if async {
		writeJSON(w, http.StatusAccepted, map[string]any{"cmdId": c.id, "output": nil, "stdout": nil, "stderr": nil, "exitCode": nil})
		return
	}
	select {
	case <-c.done:
	case <-ss.gone:
		degenerate(w, "failed to execute command: bad request: session cancelled")
		return
	}
	journal, _ := c.journal()
	rec := c.record()
	writeJSON(w, http.StatusOK, syncAnswer(r, c.id, journal, rec["exitCode"]))
}

// syncAnswer is a synchronous exec's answer by the request's headers, as
// the daemon renders it: an SDK version ≥ 0.167.0 gets the raw journal as
// output with the demuxed stdout and stderr; split output asked for gets
// the raw journal alone; anything else the output stripped of its markers.
func syncAnswer(r *http.Request, id string, journal []byte, exitCode any) map[string]any {
	answer := map[string]any{"cmdId": id, "exitCode": exitCode, "stdout": nil, "stderr": nil}
	switch {
	case newSDK(r.Header.Get("X-Daytona-SDK-Version")):
		out, errb := demux(journal)
		answer["output"], answer["stdout"], answer["stderr"] = string(journal), string(out), string(errb)
	case r.Header.Get("X-Daytona-Split-Output") == "true":
		answer["output"] = string(journal)
	default:
		answer["output"] = string(strip(journal))
	}
	return answer
}

// run runs one command after the session's earlier ones, in the
// session's shell (shell.go).
func (s *Server) run(sb *sandbox, ss *session, c *command, async bool) {
	defer close(c.done)
	started := sync.OnceFunc(func() { close(c.started) })
	defer started()
	ss.turn.Lock()
	defer ss.turn.Unlock()
	select {
	case <-ss.gone:
		return
	default:
	}
	if err := s.runInShell(sb, ss, c, async, started); err != nil && !c.noExit {
		code := -1
		c.mu.Lock()
		if c.exitCode == nil {
			c.exitCode = &code
		}
		c.mu.Unlock()
	}
}

// commandOf finds a command of a session of the request's sandbox.
func commandOf(w http.ResponseWriter, r *http.Request) (*session, *command) {
	ss := sessionOf(r)
	if ss == nil {
		toolboxError(w, r, http.StatusNotFound, "NOT_FOUND", "not found: session not found")
		return nil, nil
	}
	ss.mu.Lock()
	c := ss.commands[r.PathValue("command")]
	ss.mu.Unlock()
	if c == nil {
		toolboxError(w, r, http.StatusNotFound, "NOT_FOUND", "not found: command not found")
		return nil, nil
	}
	return ss, c
}

func (s *Server) getCommand(w http.ResponseWriter, r *http.Request) {
	if _, c := commandOf(w, r); c != nil {
		writeJSON(w, http.StatusOK, c.record())
	}
}

// sendInput is POST …/input: the data, with a newline added when it has
// none, to the command's stdin, echoed into the journal unless suppressed;
// after the exit, 410 when the exit code was seen, else 500.
func (s *Server) sendInput(w http.ResponseWriter, r *http.Request) {
	_, c := commandOf(w, r)
	if c == nil {
		return
	}
	var req struct {
		Data string `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Data == "" {
		toolboxError(w, r, http.StatusBadRequest, "INVALID_REQUEST_BODY", "invalid request body")
		return
	}
	data := req.Data
	if !strings.HasSuffix(data, "\n") {
		data += "\n"
	}
	select { // a command queued behind others has no input pipe yet
	case <-c.started:
	case <-r.Context().Done():
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.exitCode != nil && c.observed:
		toolboxError(w, r, http.StatusGone, "GONE", fmt.Sprintf("gone: command has already completed with exit code %d", *c.exitCode))
		return
	case c.stdin == nil:
		degenerate(w, "failed to open input pipe: open input.pipe: no such file or directory")
		return
	}
	if _, err := io.WriteString(c.stdin, data); err != nil {
		degenerate(w, "failed to write to input pipe: "+err.Error())
		return
	}
	if !c.suppress {
		c.log.Write(stdoutMarker)
		c.log.WriteString(data)
	}
	w.WriteHeader(http.StatusNoContent)
}

// logView is a journal as one client asks for it.
type logView struct {
	contentType string
	text        []byte
}

// logsFor renders a journal by the request's headers: split output asked
// for is the raw journal; an SDK version ≥ 0.167.0 gets JSON, the raw
// journal as output beside the demuxed stdout and stderr; anything else
// has its markers stripped.
func logsFor(r *http.Request, journal []byte) logView {
	switch {
	case r.Header.Get("X-Daytona-Split-Output") == "true":
		return logView{"text/plain; charset=utf-8", journal}
	case newSDK(r.Header.Get("X-Daytona-SDK-Version")):
		out, errb := demux(journal)
		b, _ := json.Marshal(map[string]string{"output": string(journal), "stdout": string(out), "stderr": string(errb)})
		return logView{"application/json; charset=utf-8", b}
	}
	return logView{"text/plain; charset=utf-8", strip(journal)}
}

// demux splits a journal into its stdout and stderr as Daytona's demuxers
// do: the bytes after a marker are that marker's stream, those before the
// first are dropped.
func demux(journal []byte) (stdout, stderr []byte) {
	var cur *[]byte
	for len(journal) > 0 {
		switch {
		case bytes.HasPrefix(journal, stdoutMarker):
			cur, journal = &stdout, journal[3:]
		case bytes.HasPrefix(journal, stderrMarker):
			cur, journal = &stderr, journal[3:]
		default:
			if cur != nil {
				*cur = append(*cur, journal[0])
			}
			journal = journal[1:]
		}
	}
	return stdout, stderr
}

// strip is the journal with its markers removed (the combined output).
func strip(journal []byte) []byte {
	return bytes.ReplaceAll(bytes.ReplaceAll(journal, stdoutMarker, nil), stderrMarker, nil)
}

// newSDK reports an SDK version at or above 0.167.0 (or a dev build).
func newSDK(v string) bool {
	v = strings.TrimPrefix(v, "v")
	if v == "" {
		return false
	}
	if strings.Contains(v, "dev") {
		return true
	}
	var major, minor int
	if _, err := fmt.Sscanf(v, "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 0 || minor >= 167
}

// logs is GET …/logs: the whole journal (no Range), or, upgraded to a
// WebSocket, the journal followed (see follow).
func (s *Server) logs(w http.ResponseWriter, r *http.Request) {
	ss, c := commandOf(w, r)
	if c == nil {
		return
	}
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		s.follow(w, r, ss, c)
		return
	}
	journal, _ := c.journal()
	v := logsFor(r, journal)
	w.Header().Set("Content-Type", v.contentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(v.text)
}

// AppendJournal appends raw bytes to the journal of the newest command of
// a sandbox's session (idOrName, then the session id), as if the daemon
// had written them: growth between polls, lone marker bytes, text with no
// marker at all. It reports whether the command was found.
func (s *Server) AppendJournal(idOrName, sessionID string, raw []byte) bool {
	s.mu.Lock()
	sb := s.find(idOrName)
	s.mu.Unlock()
	if sb == nil {
		return false
	}
	sb.smu.Lock()
	ss := sb.sessions[sessionID]
	sb.smu.Unlock()
	if ss == nil {
		return false
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, c := range ss.commands {
		c.mu.Lock()
		c.log.Write(raw)
		c.mu.Unlock()
		return true
	}
	return false
}
