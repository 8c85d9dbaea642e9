package spritestest

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// service is one service of a sprite: a command the sprite's runtime owns,
// started after what it needs, restarted when it exits on its own, until it
// is stopped.
type service struct {
	name     string
	cmd      string
	args     []string
	needs    []string
	httpPort *int

	mu       sync.Mutex
	status   string // stopped, starting, running, stopping, failed
	pid      int
	started  time.Time
	err      string
	restarts int
	next     time.Time     // when a crashed service starts again
	proc     *exec.Cmd     // the running process, nil otherwise
	ended    chan struct{} // closed once proc ended (its output read)
	stopped  bool          // stopped on purpose: no restart
	watchers map[chan serviceEvent]bool
	logged   []serviceEvent // the last output lines (at most logLines, logBytes), oldest first
	loggedN  int            // the bytes of logged
	logPath  string         // the log file, as the sprite sees it
	logFile  *os.File       // open while the service runs
	logSize  int64
}

// serviceEvent is one line of a service stream (NDJSON).
type serviceEvent struct {
	Type      string `json:"type"` // started, stdout, stderr, exit, error, stopping, stopped, complete
	Data      string `json:"data,omitempty"`
	ExitCode  *int   `json:"exit_code,omitempty"`
	Timestamp int64  `json:"timestamp"` // Unix milliseconds
}

func newEvent(kind, data string) serviceEvent {
	return serviceEvent{Type: kind, Data: data, Timestamp: time.Now().UnixMilli()}
}

// Service stream bounds: how long a start or create follows the logs by
// default, how long a stop waits before killing, and the restart backoff.
const (
	defaultFollow      = 5 * time.Second
	defaultStopTimeout = 10 * time.Second
	firstRestart       = time.Second
	lastRestart        = 30 * time.Second
	logLines           = 1000    // output lines the logs route keeps in memory
	logBytes           = 4 << 20 // and at most so many bytes of them
	defaultLogLines    = 100     // lines the logs route answers without ?lines
	logFileCap         = 8 << 20 // a log file is started again beyond this
)

// logDir is where a sprite's services log, in the sprite's files.
const logDir = "/.sprite/logs/services"

// object is the service with its state, as the API answers it.
func (svc *service) object() map[string]any {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	state := map[string]any{"name": svc.name, "status": svc.status}
	if svc.pid != 0 {
		state["pid"] = svc.pid
	}
	if !svc.started.IsZero() {
		state["started_at"] = svc.started.UTC().Format(time.RFC3339)
	}
	if svc.err != "" {
		state["error"] = svc.err
	}
	if svc.restarts > 0 {
		state["restart_count"] = svc.restarts
	}
	if !svc.next.IsZero() {
		state["next_restart_at"] = svc.next.UTC().Format(time.RFC3339)
	}
	return map[string]any{"name": svc.name, "cmd": svc.cmd, "args": orNone(svc.args), "needs": orNone(svc.needs),
		"http_port": svc.httpPort, "state": state}
}

func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// running reports whether the service has a live process.
func (svc *service) running() bool {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	return svc.proc != nil
}

// watch subscribes to the service's events until the returned stop.
func (svc *service) watch() (<-chan serviceEvent, func()) {
	c := make(chan serviceEvent, 256)
	svc.mu.Lock()
	svc.watchers[c] = true
	svc.mu.Unlock()
	return c, func() {
		svc.mu.Lock()
		delete(svc.watchers, c)
		svc.mu.Unlock()
	}
}

// publish hands ev to every watcher; one too slow to keep up misses it.
func (svc *service) publish(ev serviceEvent) {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	for c := range svc.watchers {
		select {
		case c <- ev:
		default:
		}
	}
}

// services lists the sprite's services by name (the caller holds s.mu).
func (sp *sprite) serviceList() []*service {
	out := make([]*service, 0, len(sp.services))
	for _, svc := range sp.services {
		out = append(out, svc)
	}
	slices.SortFunc(out, func(a, b *service) int {
		if a.name < b.name {
			return -1
		}
		return 1
	})
	return out
}

// findService locks the server, finds the request's sprite and service and
// unlocks; it answers 404 for either missing.
func (s *Server) findService(w http.ResponseWriter, r *http.Request, name string) (*sprite, *service, bool) {
	sp, ok := s.lock(w, r)
	if !ok {
		return nil, nil, false
	}
	svc := sp.services[name]
	s.mu.Unlock()
	if svc == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "service not found"})
		return nil, nil, false
	}
	return sp, svc, true
}

// listServices is GET /v1/sprites/{name}/services.
func (s *Server) listServices(w http.ResponseWriter, r *http.Request, _ []byte) {
	sp, ok := s.lock(w, r)
	if !ok {
		return
	}
	all := sp.serviceList()
	s.mu.Unlock()
	out := make([]map[string]any, 0, len(all))
	for _, svc := range all {
		out = append(out, svc.object())
	}
	writeJSON(w, http.StatusOK, out)
}

// getService is GET /v1/sprites/{name}/services/{service}.
func (s *Server) getService(w http.ResponseWriter, r *http.Request, _ []byte) {
	if _, svc, ok := s.findService(w, r, r.PathValue("service")); ok {
		writeJSON(w, http.StatusOK, svc.object())
	}
}

// putService is PUT /v1/sprites/{name}/services/{service}: the definition
// (cmd required, args, needs that exist and make no cycle, http_port)
// made or replaced, a running one stopped first, then started with what it
// needs and its events streamed for ?duration.
func (s *Server) putService(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Cmd      string   `json:"cmd"`
		Args     []string `json:"args"`
		Needs    []string `json:"needs"`
		HTTPPort *int     `json:"http_port"`
	}
	follow, err := durationParam(r, "duration", defaultFollow)
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err == nil && req.Cmd == "" {
		err = errors.New("cmd is required")
	}
	if err == nil && req.HTTPPort != nil && (*req.HTTPPort < 1 || *req.HTTPPort > 65535) {
		err = errors.New("http_port must be between 1 and 65535")
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid request: " + err.Error()})
		return
	}
	name := r.PathValue("service")
	sp, ok := s.lock(w, r)
	if !ok {
		return
	}
	for _, need := range req.Needs {
		if sp.services[need] == nil || need == name {
			s.mu.Unlock()
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("unknown dependency %q", need)})
			return
		}
	}
	old := sp.services[name]
	svc := &service{name: name, cmd: req.Cmd, args: req.Args, needs: req.Needs, httpPort: req.HTTPPort,
		status: "stopped", watchers: map[chan serviceEvent]bool{}}
	if cyclic(sp, svc) {
		s.mu.Unlock()
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "dependency cycle"})
		return
	}
	sp.services[name] = svc
	s.mu.Unlock()
	if old != nil {
		s.halt(old, defaultStopTimeout, func(serviceEvent) {})
	}
	s.follow(w, r, svc, follow, func() { s.startWithNeeds(sp, svc) })
}

// cyclic reports whether svc, put in sp, would need itself (the caller
// holds s.mu).
func cyclic(sp *sprite, svc *service) bool {
	seen := map[string]bool{}
	var visit func(needs []string) bool
	visit = func(needs []string) bool {
		for _, n := range needs {
			if n == svc.name {
				return true
			}
			if dep := sp.services[n]; dep != nil && !seen[n] {
				seen[n] = true
				if visit(dep.needs) {
					return true
				}
			}
		}
		return false
	}
	return visit(svc.needs)
}

// startService is POST …/services/{service}/start: the service (and what
// it needs) started unless it runs, its events streamed for ?duration.
func (s *Server) startService(w http.ResponseWriter, r *http.Request, _ []byte) {
	sp, svc, follow, ok := s.followedService(w, r)
	if !ok {
		return
	}
	s.follow(w, r, svc, follow, func() { s.startWithNeeds(sp, svc) })
}

// followedService is a start's or restart's service and how long its
// events are followed (?duration), or false once it answered 400 or 404.
func (s *Server) followedService(w http.ResponseWriter, r *http.Request) (*sprite, *service, time.Duration, bool) {
	follow, ok := durationQuery(w, r, "duration", defaultFollow)
	if !ok {
		return nil, nil, 0, false
	}
	sp, svc, ok := s.findService(w, r, r.PathValue("service"))
	return sp, svc, follow, ok
}

// stopService is POST …/services/{service}/stop: SIGTERM to the service's
// process group, SIGKILL after ?timeout; 409 when it does not run.
func (s *Server) stopService(w http.ResponseWriter, r *http.Request, _ []byte) {
	timeout, ok := durationQuery(w, r, "timeout", defaultStopTimeout)
	if !ok {
		return
	}
	_, svc, ok := s.findService(w, r, r.PathValue("service"))
	if !ok {
		return
	}
	if !svc.running() {
		writeJSON(w, http.StatusConflict, map[string]string{"error": "service not running"})
		return
	}
	out := startNDJSON(w)
	s.halt(svc, timeout, func(ev serviceEvent) { out.line(eventMap(ev)) })
	out.line(eventMap(newEvent("complete", "")))
}

// signalService is POST /v1/sprites/{name}/services/signal with {name,
// signal}: 204; 404 for no such service, 409 when it does not run, 400 for
// a signal not known.
func (s *Server) signalService(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Name   string `json:"name"`
		Signal string `json:"signal"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.Name == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid request"})
		return
	}
	_, svc, ok := s.findService(w, r, req.Name)
	if !ok {
		return
	}
	sig, _, known := signalNamed(req.Signal)
	svc.mu.Lock()
	pid := svc.pid
	running := svc.proc != nil
	svc.mu.Unlock()
	switch {
	case !known:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid signal: " + req.Signal})
	case !running:
		writeJSON(w, http.StatusConflict, map[string]string{"error": "service not running"})
	default:
		_ = stubproc.SignalGroup(pid, sig)
		w.WriteHeader(http.StatusNoContent)
	}
}

// deleteService is DELETE …/services/{service}: 204; 409 while it runs or
// another service needs it.
func (s *Server) deleteService(w http.ResponseWriter, r *http.Request, _ []byte) {
	sp, svc, ok := s.findService(w, r, r.PathValue("service"))
	if !ok {
		return
	}
	if svc.running() {
		writeJSON(w, http.StatusConflict, map[string]string{"error": "service is running"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, other := range sp.services {
		if slices.Contains(other.needs, svc.name) {
			writeJSON(w, http.StatusConflict, map[string]string{"error": "service is needed by " + other.name})
			return
		}
	}
	svc.mu.Lock()
	svc.stopped = true // a restart waiting must not start it again
	svc.mu.Unlock()
	delete(sp.services, svc.name)
	w.WriteHeader(http.StatusNoContent)
}

// durationQuery is durationParam answering 400 for a value it refuses.
func durationQuery(w http.ResponseWriter, r *http.Request, name string, def time.Duration) (time.Duration, bool) {
	d, err := durationParam(r, name, def)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid request: " + err.Error()})
	}
	return d, err == nil
}

// durationParam reads a Go duration from the query (def when absent).
func durationParam(r *http.Request, name string, def time.Duration) (time.Duration, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s: %q is not a duration", name, v)
	}
	return d, nil
}

// follow answers NDJSON: the events of svc from just before begin runs,
// for follow, then complete (less if the client leaves).
func (s *Server) follow(w http.ResponseWriter, r *http.Request, svc *service, follow time.Duration, begin func()) {
	events, stop := svc.watch()
	defer stop()
	out := startNDJSON(w)
	begin()
	if s.relay(out, r, events, follow) {
		out.line(eventMap(newEvent("complete", "")))
	}
}

// relay writes events as they come for d; false if the client left or the
// server closes first.
func (s *Server) relay(out ndjson, r *http.Request, events <-chan serviceEvent, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		select {
		case ev := <-events:
			out.line(eventMap(ev))
		case <-deadline.C:
			return true
		case <-s.Closing():
			return false
		case <-r.Context().Done():
			return false
		}
	}
}

func eventMap(ev serviceEvent) map[string]any {
	b, _ := json.Marshal(ev)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// startWithNeeds starts what svc needs, then svc, each unless it runs.
func (s *Server) startWithNeeds(sp *sprite, svc *service) {
	s.mu.Lock()
	var needs []*service
	for _, n := range svc.needs {
		if dep := sp.services[n]; dep != nil {
			needs = append(needs, dep)
		}
	}
	s.mu.Unlock()
	for _, dep := range needs {
		s.startWithNeeds(sp, dep)
	}
	svc.mu.Lock()
	svc.stopped = false
	svc.mu.Unlock()
	s.launch(sp, svc)
}

// launch runs svc's command as sprite in the sprite's files, unless it
// runs; when the process ends on its own the service fails and starts
// again after a backoff (1 s, doubling, at most 30 s).
func (s *Server) launch(sp *sprite, svc *service) {
	svc.mu.Lock()
	if svc.proc != nil {
		svc.mu.Unlock()
		return
	}
	svc.status, svc.err, svc.next = "starting", "", time.Time{}
	svc.mu.Unlock()
	cmd, outR, errR, err := s.serviceCommand(sp, svc)
	svc.mu.Lock()
	if err != nil {
		svc.status, svc.err = "failed", err.Error()
		svc.mu.Unlock()
		svc.publish(newEvent("error", err.Error()))
		return
	}
	svc.proc, svc.pid, svc.started, svc.status = cmd, cmd.Process.Pid, time.Now(), "running"
	svc.openLog(sp)
	svc.ended = make(chan struct{})
	ended := svc.ended
	svc.mu.Unlock()
	svc.publish(newEvent("started", ""))
	done, tracked := s.Track()
	if !tracked { // the server closes: nothing follows the process
		_ = stubproc.SignalGroup(cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		closeAll(outR, errR)
		svc.mu.Lock()
		svc.proc, svc.pid, svc.status, svc.stopped = nil, 0, "stopped", true
		svc.mu.Unlock()
		close(ended)
		return
	}
	var readers sync.WaitGroup
	for kind, r := range map[string]io.ReadCloser{"stdout": outR, "stderr": errR} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			defer r.Close()
			lines := bufio.NewScanner(r)
			lines.Buffer(make([]byte, 64<<10), 1<<20)
			for lines.Scan() {
				ev := newEvent(kind, lines.Text()+"\n")
				svc.log(ev)
				svc.publish(ev)
			}
		}()
	}
	go func() {
		defer done()
		_ = cmd.Wait()
		// The runtime owns the service's process group: what the command
		// left behind goes with it, so its output ends here.
		_ = stubproc.SignalGroup(cmd.Process.Pid, syscall.SIGKILL)
		readers.Wait()
		code := exitCode(cmd.ProcessState)
		svc.mu.Lock()
		svc.proc, svc.pid = nil, 0
		if svc.logFile != nil {
			_ = svc.logFile.Close()
			svc.logFile = nil
		}
		again := !svc.stopped
		if again {
			svc.status, svc.err = "failed", fmt.Sprintf("exited with code %d", code)
			svc.restarts++
			svc.next = time.Now().Add(min(firstRestart<<min(svc.restarts-1, 5), lastRestart))
		} else {
			svc.status = "stopped"
		}
		next := svc.next
		svc.mu.Unlock()
		svc.publish(serviceEvent{Type: "exit", ExitCode: &code, Timestamp: time.Now().UnixMilli()})
		close(ended)
		if again {
			s.restartAt(sp, svc, next)
		}
	}()
}

// restartAt starts svc again at next, unless it was stopped, deleted or
// started meanwhile, or the server closes.
func (s *Server) restartAt(sp *sprite, svc *service, next time.Time) {
	s.Go(func() {
		t := time.NewTimer(time.Until(next))
		defer t.Stop()
		select {
		case <-t.C:
		case <-s.Closing():
			return
		}
		svc.mu.Lock()
		again := !svc.stopped && svc.proc == nil && svc.next.Equal(next)
		svc.mu.Unlock()
		if again {
			s.launch(sp, svc)
		}
	})
}

// serviceCommand starts svc's process in its own group, stdout and stderr
// on pipes.
func (s *Server) serviceCommand(sp *sprite, svc *service) (*exec.Cmd, *os.File, *os.File, error) {
	env := defaultEnv(sp.space.Seen(spriteUser.Home), false)
	resolved, err := sp.space.LookPath(svc.cmd, pathOf(env), spriteUser.Home)
	if err != nil {
		return nil, nil, nil, err
	}
	cmd, err := sp.space.Command(spriteUser.Home, spriteUser, resolved, svc.args...)
	if err != nil {
		return nil, nil, nil, err
	}
	cmd.Env = env
	cmd.SysProcAttr = stubproc.GroupAttr()
	outR, outW, err1 := os.Pipe()
	errR, errW, err2 := os.Pipe()
	if err := errors.Join(err1, err2); err != nil {
		closeAll(outR, outW, errR, errW)
		return nil, nil, nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	err = cmd.Start()
	closeAll(outW, errW)
	if err != nil {
		closeAll(outR, errR)
		return nil, nil, nil, err
	}
	return cmd, outR, errR, nil
}

// halt stops svc for good: SIGTERM to its group, SIGKILL after timeout,
// each step reported to report; it returns once the process ended.
func (s *Server) halt(svc *service, timeout time.Duration, report func(serviceEvent)) {
	svc.mu.Lock()
	svc.stopped, svc.next = true, time.Time{}
	proc, ended := svc.proc, svc.ended
	if proc != nil {
		svc.status = "stopping"
	}
	svc.mu.Unlock()
	if proc == nil {
		return
	}
	events, stop := svc.watch()
	defer stop()
	report(newEvent("stopping", ""))
	_ = stubproc.SignalGroup(proc.Process.Pid, syscall.SIGTERM)
	t := time.NewTimer(timeout)
	defer t.Stop()
	for done := false; !done; {
		select {
		case ev := <-events:
			report(ev)
		case <-t.C:
			_ = stubproc.SignalGroup(proc.Process.Pid, syscall.SIGKILL)
		case <-ended:
			done = true
		}
	}
	for drained := false; !drained; {
		select {
		case ev := <-events:
			report(ev)
		default:
			drained = true
		}
	}
	report(newEvent("stopped", ""))
}

// stopServices ends every service of sp for good (the sprite goes, or
// restarts from a checkpoint).
func (s *Server) stopServices(services []*service) {
	for _, svc := range services {
		s.halt(svc, 0, func(serviceEvent) {})
	}
}

// openLog opens the service's log file in the sprite's files (appending:
// it is kept across runs and after the service is deleted); the caller
// holds svc.mu. A log that cannot be opened leaves the output in memory.
func (svc *service) openLog(sp *sprite) {
	svc.logPath = logDir + "/" + svc.name + ".log"
	host, err := sp.hostPath(svc.logPath)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(host), 0o755)
	}
	if err != nil {
		return
	}
	if f, err := os.OpenFile(host, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
		svc.logFile = f
		if info, err := f.Stat(); err == nil {
			svc.logSize = info.Size()
		}
	}
}

// log keeps an output line: in memory (the last logLines, within logBytes) and in the log
// file, a line each stamped with its time and stream; a file beyond
// logFileCap starts again.
func (svc *service) log(ev serviceEvent) {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	svc.logged = append(svc.logged, ev)
	svc.loggedN += len(ev.Data)
	drop := 0
	for len(svc.logged)-drop > logLines || (svc.loggedN > logBytes && drop < len(svc.logged)-1) {
		svc.loggedN -= len(svc.logged[drop].Data)
		drop++
	}
	svc.logged = slices.Delete(svc.logged, 0, drop)
	if svc.logFile == nil {
		return
	}
	line := fmt.Sprintf("%s [%s] %s", time.UnixMilli(ev.Timestamp).UTC().Format(time.RFC3339Nano), ev.Type, ev.Data)
	if svc.logSize+int64(len(line)) > logFileCap {
		if svc.logFile.Truncate(0) == nil {
			svc.logSize = 0
		}
	}
	n, _ := svc.logFile.WriteString(line)
	svc.logSize += int64(n)
}

// restartService is POST …/services/{service}/restart: the service stopped
// (if it runs) and started again with what it needs, the events of both
// streamed, the start's for ?duration.
func (s *Server) restartService(w http.ResponseWriter, r *http.Request, _ []byte) {
	sp, svc, follow, ok := s.followedService(w, r)
	if !ok {
		return
	}
	out := startNDJSON(w)
	s.halt(svc, defaultStopTimeout, func(ev serviceEvent) { out.line(eventMap(ev)) })
	events, stop := svc.watch()
	defer stop()
	s.startWithNeeds(sp, svc)
	if s.relay(out, r, events, follow) {
		out.line(eventMap(newEvent("complete", "")))
	}
}

// serviceLogs is GET …/services/{service}/logs?lines=&duration=: the last
// ?lines output lines kept (default 100), then, with ?duration, the
// service's events as they come for that long; complete names the log
// files.
func (s *Server) serviceLogs(w http.ResponseWriter, r *http.Request, _ []byte) {
	follow, ok := durationQuery(w, r, "duration", 0)
	if !ok {
		return
	}
	lines := defaultLogLines
	if v := r.URL.Query().Get("lines"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid request: lines: " + strconv.Quote(v) + " is not a count"})
			return
		}
		lines = n
	}
	_, svc, ok := s.findService(w, r, r.PathValue("service"))
	if !ok {
		return
	}
	events, stop := svc.watch()
	defer stop()
	svc.mu.Lock()
	kept := slices.Clone(svc.logged[max(0, len(svc.logged)-lines):])
	logPath := cmp.Or(svc.logPath, logDir+"/"+svc.name+".log")
	svc.mu.Unlock()
	out := startNDJSON(w)
	for _, ev := range kept {
		out.line(eventMap(ev))
	}
	if follow > 0 && !s.relay(out, r, events, follow) {
		return
	}
	complete := eventMap(newEvent("complete", ""))
	complete["log_files"] = map[string]string{"output": logPath}
	out.line(complete)
}
