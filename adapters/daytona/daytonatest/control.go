package daytonatest

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
)

// sandbox is one sandbox of the server.
type sandbox struct {
	id, name, snapshot string
	labels, env        map[string]string
	state, desired     string
	next               string    // the state the current transition ends in ("" = none)
	until              time.Time // when it ends
	errorReason        string
	createdAt          time.Time
	updatedAt          time.Time
	autoStop           int
	autoArchive        int
	autoDelete         int
	blockAll           bool
	networkAllowList   string
	domainAllowList    string
	deleted            bool
	space              *stubfs.Space // its filesystem, as its processes and the file routes see it
	smu                sync.Mutex
	sessions           map[string]*session
	ptys               map[string]*ptySession      // the PTY sessions (pty.go)
	leftBehind         []int                       // the sessions of ended PTY shells whose jobs outlived them
	interpreters       map[string]*interpreter     // the code interpreter's contexts (interpreter.go)
	recordings         map[string]*activeRecording // the screen recordings that run (computeruse.go)
	lsps               map[string]*lspServer       // the language servers, by the daemon's key (lsp.go)
	public             bool                        // its previews need no token
	cpu, mem, disk     int                         // cores, GB, GB
	volumes            []mount                     // the volumes it mounts, by id
	authToken          string                      // its previews' token
}

// settle ends a transition whose time has come (the caller holds s.mu);
// a destroyed sandbox leaves the table.
func (s *Server) settle(sb *sandbox) {
	if sb.next == "" || s.held[sb.id] || time.Now().Before(sb.until) {
		return
	}
	sb.state, sb.next, sb.updatedAt = sb.next, "", time.Now().UTC()
	if sb.state == "destroyed" {
		delete(s.sandboxes, sb.id)
	}
}

// begin starts a transition through via to to (instant without a
// transition time).
func (s *Server) begin(sb *sandbox, via, to string, d time.Duration) {
	sb.desired = to
	sb.updatedAt = time.Now().UTC()
	if d <= 0 {
		sb.state, sb.next = to, ""
		if to == "destroyed" {
			delete(s.sandboxes, sb.id)
		}
		return
	}
	sb.state, sb.next, sb.until = via, to, time.Now().Add(d)
}

// busy reports a transition under way.
func busy(sb *sandbox) bool { return sb.next != "" || (sb.state != sb.desired && sb.desired != "") }

// with runs f on the sandbox idOrName names, under the server's lock, if
// there is one.
func (s *Server) with(idOrName string, f func(sb *sandbox)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb := s.find(idOrName); sb != nil {
		f(sb)
	}
}

// find resolves an id first, then a name (the caller holds s.mu); deleted
// sandboxes answer by id only, until destroyed.
func (s *Server) find(idOrName string) *sandbox {
	if sb := s.sandboxes[idOrName]; sb != nil {
		s.settle(sb)
		return s.sandboxes[idOrName]
	}
	for _, sb := range s.sandboxes {
		if sb.name == idOrName && !sb.deleted {
			s.settle(sb)
			return s.sandboxes[sb.id]
		}
	}
	return nil
}

// dto is the Sandbox object of the control plane's answers.
func (s *Server) dto(sb *sandbox) map[string]any {
	return map[string]any{
		"id": sb.id, "organizationId": "org-paddock-test", "name": sb.name, "user": "daytona", "env": sb.env,
		"labels": sb.labels, "public": sb.public, "networkBlockAll": sb.blockAll, "networkAllowList": nullable(sb.networkAllowList),
		"domainAllowList": nullable(sb.domainAllowList), "target": "us", "cpu": sb.cpu, "gpu": 0, "memory": sb.mem, "disk": sb.disk,
		"snapshot": sb.snapshot, "state": sb.state, "desiredState": sb.desired, "errorReason": nullable(sb.errorReason),
		"autoStopInterval": sb.autoStop, "autoArchiveInterval": sb.autoArchive, "autoDeleteInterval": sb.autoDelete,
		"createdAt": sb.createdAt.Format(time.RFC3339Nano), "updatedAt": sb.updatedAt.Format(time.RFC3339Nano),
		"toolboxProxyUrl": s.URL() + "/toolbox", "sandboxClass": "container", "daemonVersion": "v0.190.0",
		"volumes": orNoMounts(sb.volumes),
	}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// create is POST /api/sandbox: the snapshot and resources are checked
// before the name (a duplicate with a bad snapshot is 400, not 409).
func (s *Server) create(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Name        string            `json:"name"`
		Snapshot    *string           `json:"snapshot"`
		Labels      map[string]string `json:"labels"`
		Env         map[string]string `json:"env"`
		CPU         *int              `json:"cpu"`
		Memory      *int              `json:"memory"`
		Disk        *int              `json:"disk"`
		BuildInfo   json.RawMessage   `json:"buildInfo"`
		AutoStop    *int              `json:"autoStopInterval"`
		AutoArchive *int              `json:"autoArchiveInterval"`
		AutoDelete  *int              `json:"autoDeleteInterval"`
		Volumes     []mount           `json:"volumes"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		apiError(w, r, http.StatusBadRequest, "Invalid request body")
		return
	}
	snapshot := "default"
	if req.Snapshot != nil {
		snapshot = *req.Snapshot
		if len(req.BuildInfo) > 0 {
			apiError(w, r, http.StatusBadRequest, "Cannot specify a snapshot when using a build info entry")
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var files string
	if len(req.BuildInfo) == 0 {
		var msg string
		if files, msg = s.sandboxSnapshot(snapshot); msg != "" {
			apiError(w, r, http.StatusBadRequest, msg)
			return
		}
	}
	if len(req.BuildInfo) == 0 && (req.CPU != nil || req.Memory != nil || req.Disk != nil) {
		apiError(w, r, http.StatusBadRequest, "Cannot specify Sandbox resources when using a snapshot")
		return
	}
	volumes, binds, status, msg := s.resolveMounts(req.Volumes)
	if status != 0 {
		apiError(w, r, status, msg)
		return
	}
	id := newID()
	name := req.Name
	name = cmp.Or(name, id)
	for _, sb := range s.sandboxes {
		if sb.name == name && !sb.deleted {
			apiError(w, r, http.StatusConflict, fmt.Sprintf("Sandbox with name %s already exists", name))
			return
		}
	}
	autoStop, autoArchive := orDefault(req.AutoStop, 15), orDefault(req.AutoArchive, 10080)
	if msg := checkInterval("autostop", &autoStop); msg != "" {
		apiError(w, r, http.StatusBadRequest, msg)
		return
	}
	if msg := checkInterval("autoarchive", &autoArchive); msg != "" {
		apiError(w, r, http.StatusBadRequest, msg)
		return
	}
	now := time.Now().UTC()
	sb := &sandbox{id: id, name: name, snapshot: snapshot, labels: orEmpty(req.Labels), env: orEmpty(req.Env),
		createdAt: now, updatedAt: now, autoStop: autoStop, autoArchive: autoArchive,
		autoDelete: orDefault(req.AutoDelete, -1), cpu: 1, mem: 1, disk: 3, authToken: previewToken()}
	sb.sessions, sb.ptys, sb.interpreters = map[string]*session{}, map[string]*ptySession{}, map[string]*interpreter{}
	sb.recordings, sb.lsps = map[string]*activeRecording{}, map[string]*lspServer{}
	sb.volumes = volumes
	space, err := stubfs.NewSpace(stubfs.Config{Root: filepath.Join(s.Root(), id, "fs"), Scratch: filepath.Join(s.Root(), id, "stubfs"),
		Users: users, Mapped: s.mapped, Binds: binds})
	if err == nil && files != "" {
		if err = stubfs.CopyTree(files, space.Root()); err != nil {
			space.Retire()
		}
	}
	if err != nil {
		apiError(w, r, http.StatusInternalServerError, "creating the sandbox failed")
		return
	}
	sb.space = space
	s.sandboxes[id] = sb
	s.order = append(s.order, id)
	s.begin(sb, "creating", "started", s.transition)
	writeJSON(w, http.StatusOK, s.dto(sb))
}

func orNoMounts(m []mount) []mount {
	if m == nil {
		return []mount{}
	}
	return m
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func orDefault(p *int, d int) int {
	if p == nil {
		return d
	}
	return *p
}

// get is GET /api/sandbox/{idOrName}.
func (s *Server) get(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.find(r.PathValue("idOrName"))
	if sb == nil {
		s.notFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, s.dto(sb))
}

// live is the request's sandbox, unless it is unknown or deleted: then it
// answers 404 and returns nil (the caller holds s.mu).
func (s *Server) live(w http.ResponseWriter, r *http.Request) *sandbox {
	sb := s.find(r.PathValue("idOrName"))
	if sb == nil || sb.deleted {
		s.notFound(w, r)
		return nil
	}
	return sb
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	apiError(w, r, http.StatusNotFound, "Sandbox with ID or name "+r.PathValue("idOrName")+" not found")
}

// delete is DELETE /api/sandbox/{idOrName}: a soft delete that frees the
// name at once; the id answers, destroying, until it is destroyed.
func (s *Server) delete(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.live(w, r)
	switch {
	case sb == nil:
		return
	case busy(sb):
		apiError(w, r, http.StatusConflict, "Sandbox state change in progress")
		return
	}
	sb.deleted = true
	sb.dropSessions()
	sb.space.Retire()
	sb.name = "DESTROYED_" + sb.name + "_" + strconv.FormatInt(time.Now().UnixMilli(), 10)
	out := s.dto(sb)
	s.begin(sb, "destroying", "destroyed", s.destroying)
	writeJSON(w, http.StatusOK, out)
}

// stateConflict is Daytona's answer to a change while another is under
// way.
const stateConflict = "Sandbox state change in progress"

// change serves a state change of the sandbox r names: next begins it,
// or refuses with a status and Daytona's message, under the server's lock;
// the answer is the sandbox.
func (s *Server) change(w http.ResponseWriter, r *http.Request, next func(sb *sandbox) (status int, msg string)) {
	s.onLive(w, r, func(sb *sandbox) {
		if status, msg := next(sb); status != 0 {
			apiError(w, r, status, msg)
			return
		}
		writeJSON(w, http.StatusOK, s.dto(sb))
	})
}

// onLive runs f on the request's sandbox under the server's lock, unless
// it is unknown or deleted (then live has answered 404).
func (s *Server) onLive(w http.ResponseWriter, r *http.Request, f func(sb *sandbox)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb := s.live(w, r); sb != nil {
		f(sb)
	}
}

// start is POST …/start, with Daytona's guards: a started sandbox is a
// no-op, an errored one 400, one in transition 409.
func (s *Server) start(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.change(w, r, func(sb *sandbox) (int, string) {
		switch {
		case sb.state == "error" || sb.state == "build_failed":
			return http.StatusBadRequest, "Sandbox is in an errored state"
		case sb.state == "started" && !busy(sb):
		case busy(sb) && sb.state != "archiving":
			return http.StatusConflict, stateConflict
		case sb.state == "stopped":
			s.begin(sb, "starting", "started", s.transition)
		case sb.state == "archived" || sb.state == "archiving":
			s.begin(sb, "restoring", "started", s.transition)
		case sb.state == "paused":
			s.begin(sb, "resuming", "started", s.transition)
		default:
			return http.StatusBadRequest, "Sandbox is not in valid state"
		}
		return 0, ""
	})
}

// stop is POST …/stop: not idempotent (a stopped sandbox is 400).
func (s *Server) stop(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.change(w, r, func(sb *sandbox) (int, string) {
		switch {
		case busy(sb):
			return http.StatusConflict, stateConflict
		case sb.state == "started" || sb.state == "paused":
			sb.dropSessions() // the daemon stops: its sessions are forgotten
			s.begin(sb, "stopping", "stopped", s.transition)
			return 0, ""
		}
		return http.StatusBadRequest, "Sandbox is not in a stoppable state"
	})
}

// archive is POST …/archive: only a stopped sandbox.
func (s *Server) archive(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.change(w, r, func(sb *sandbox) (int, string) {
		switch {
		case busy(sb):
			return http.StatusConflict, stateConflict
		case sb.state != "stopped":
			return http.StatusBadRequest, "Sandbox is not stopped"
		}
		s.begin(sb, "archiving", "archived", s.transition)
		return 0, ""
	})
}

// pause is POST …/pause: only a started sandbox, and only one of a VM
// class; every sandbox here is a container, Daytona's default class, which
// the control plane refuses with 422.
func (s *Server) pause(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.change(w, r, func(sb *sandbox) (int, string) {
		switch {
		case sb.state != "started":
			return http.StatusBadRequest, "Sandbox must be in started state to pause"
		case busy(sb):
			return http.StatusConflict, stateConflict
		}
		return http.StatusUnprocessableEntity, "Pausing is not supported for this sandbox"
	})
}

// recover is POST …/recover: only a sandbox whose runner marked its error
// recoverable (a full disk, say) is recovered; nothing here runs on a
// runner that marks one, so the control plane's 400 is the answer.
func (s *Server) recover(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.change(w, r, func(*sandbox) (int, string) {
		return http.StatusBadRequest, "Sandbox is not in a recoverable state"
	})
}

// fork is POST …/fork: only a VM sandbox forks, so the control plane
// refuses a container (Daytona's default class, and every sandbox here)
// before anything else, 422.
func (s *Server) fork(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.change(w, r, func(*sandbox) (int, string) {
		return http.StatusUnprocessableEntity, "Forking is not supported for this sandbox"
	})
}

// forks is GET …/forks and ancestors GET …/ancestors: a container has no
// fork relations, so both are empty.
func (s *Server) forks(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.onLive(w, r, func(*sandbox) { writeJSON(w, http.StatusOK, []any{}) })
}

// parent is GET …/parent: none, for a sandbox that no fork made.
func (s *Server) parent(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.onLive(w, r, func(*sandbox) {
		apiError(w, r, http.StatusNotFound, "Parent sandbox not found for sandbox "+r.PathValue("idOrName"))
	})
}

// list is GET /api/sandbox: the labels filter (a JSON object), limit
// 1..200 (default 100), an opaque cursor, {items, nextCursor|null}, in
// creation order; deleted sandboxes are not listed.
func (s *Server) list(w http.ResponseWriter, r *http.Request, _ []byte) {
	q := r.URL.Query()
	var labels map[string]string
	if l := q.Get("labels"); l != "" {
		if err := json.Unmarshal([]byte(l), &labels); err != nil {
			apiError(w, r, http.StatusBadRequest, "Invalid labels JSON format")
			return
		}
	}
	limit := 100
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 200 {
			apiError(w, r, http.StatusBadRequest, "limit must not be greater than 200, limit must not be less than 1")
			return
		}
		limit = n
	}
	start := 0
	if c := q.Get("cursor"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		n, aerr := strconv.Atoi(string(b))
		if err != nil || aerr != nil || n < 0 {
			apiError(w, r, http.StatusBadRequest, "Invalid cursor")
			return
		}
		start = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var matched []*sandbox
	for _, id := range s.order {
		sb := s.sandboxes[id]
		if sb == nil || sb.deleted {
			continue
		}
		s.settle(sb)
		if sb = s.sandboxes[id]; sb != nil && hasLabels(sb, labels) {
			matched = append(matched, sb)
		}
	}
	items := []map[string]any{}
	for i := start; i < len(matched) && i < start+limit; i++ {
		m := s.dto(matched[i])
		for _, k := range []string{"env", "networkAllowList", "domainAllowList", "networkBlockAll"} {
			delete(m, k) // a list item is a subset
		}
		items = append(items, m)
	}
	var next any
	if start+limit < len(matched) {
		next = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(start + limit)))
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "nextCursor": next})
}

func hasLabels(sb *sandbox, want map[string]string) bool {
	for k, v := range want {
		if sb.labels[k] != v {
			return false
		}
	}
	return true
}

// domainPattern is a host name with an optional leading "*.".
var domainPattern = regexp.MustCompile(`^(\*\.)?([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)*[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$`)

// network is POST …/network-settings: typed fields, at least one; the
// lists are comma-separated strings (≤10 domains); block-all clears the
// CIDR list, a non-empty CIDR list lifts block-all.
func (s *Server) network(w http.ResponseWriter, r *http.Request, body []byte) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		apiError(w, r, http.StatusBadRequest, "Invalid request body")
		return
	}
	var blockAll *bool
	var allow, domains *string
	for name, dst := range map[string]any{"networkBlockAll": &blockAll, "networkAllowList": &allow, "domainAllowList": &domains} {
		raw, ok := fields[name]
		if !ok {
			continue
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			kind := "a string"
			if name == "networkBlockAll" {
				kind = "a boolean value"
			}
			apiError(w, r, http.StatusBadRequest, name+" must be "+kind)
			return
		}
	}
	if blockAll == nil && allow == nil && domains == nil {
		apiError(w, r, http.StatusBadRequest, "At least one of networkBlockAll, networkAllowList or domainAllowList must be provided")
		return
	}
	if domains != nil {
		list := trimmed(*domains)
		if len(list) > 10 {
			apiError(w, r, http.StatusBadRequest, "Domain allow list cannot contain more than 10 domains")
			return
		}
		for _, d := range list {
			if !domainPattern.MatchString(d) {
				apiError(w, r, http.StatusBadRequest, fmt.Sprintf("Invalid domain: %q", d))
				return
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.find(r.PathValue("idOrName"))
	if sb == nil || sb.deleted {
		s.notFound(w, r)
		return
	}
	if domains != nil {
		sb.domainAllowList = joinTrimmed(*domains)
	}
	if allow != nil {
		sb.networkAllowList = joinTrimmed(*allow)
		if sb.networkAllowList != "" {
			sb.blockAll = false
		}
	}
	if blockAll != nil {
		sb.blockAll = *blockAll
		if *blockAll {
			sb.networkAllowList = ""
		}
	}
	writeJSON(w, http.StatusOK, s.dto(sb))
}

func joinTrimmed(list string) string {
	out := ""
	for i, e := range trimmed(list) {
		if i > 0 {
			out += ","
		}
		out += e
	}
	return out
}

// toolboxProxyURL is GET …/toolbox-proxy-url.
func (s *Server) toolboxProxyURL(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb := s.find(r.PathValue("idOrName")); sb == nil {
		s.notFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"url": s.URL() + "/toolbox"})
}

// Sandboxes answers the names of the live (not deleted) sandboxes, sorted.
func (s *Server) Sandboxes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for _, sb := range s.sandboxes {
		if !sb.deleted {
			names = append(names, sb.name)
		}
	}
	sort.Strings(names)
	return names
}

// ID is the id of the sandbox called name, or "".
func (s *Server) ID(name string) (v string) {
	s.with(name, func(sb *sandbox) { v = sb.id })
	return v
}

// State is the state of the sandbox with this id or name, or "" when
// there is none.
func (s *Server) State(idOrName string) (v string) {
	s.with(idOrName, func(sb *sandbox) { v = sb.state })
	return v
}

// SetState forces a sandbox's state (error, build_failed, ...); a
// transitional state (starting, stopping, ...) keeps its target as the
// desired state but never ends by itself (a transition Daytona is stuck
// in).
func (s *Server) SetState(idOrName, state, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb := s.find(idOrName); sb != nil {
		sb.state, sb.next, sb.errorReason = state, "", reason
		sb.desired = map[string]string{"starting": "started", "restoring": "started", "resuming": "started", "creating": "started",
			"stopping": "stopped", "archiving": "archived", "pausing": "paused", "destroying": "destroyed"}[state]
		sb.desired = cmp.Or(sb.desired, state)
	}
}

// Hold freezes the sandbox's transitions (it stays starting, stopping,
// ...) until Release.
func (s *Server) Hold(idOrName string) {
	s.with(idOrName, func(sb *sandbox) {
		s.held[sb.id] = true
	})
}

// Release lets a held sandbox's transition end.
func (s *Server) Release(idOrName string) {
	s.with(idOrName, func(sb *sandbox) {
		delete(s.held, sb.id)
	})
}

// Network is the sandbox's stored policy: block-all, the CIDR list and
// the domain list.
func (s *Server) Network(idOrName string) (blockAll bool, cidrs, domains string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb := s.find(idOrName); sb != nil {
		return sb.blockAll, sb.networkAllowList, sb.domainAllowList
	}
	return false, "", ""
}

// Labels are the sandbox's labels.
func (s *Server) Labels(idOrName string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	if sb := s.find(idOrName); sb != nil {
		for k, v := range sb.labels {
			out[k] = v
		}
	}
	return out
}

// takeAll empties *m under mu and answers what it held, to be ended
// outside the lock.
func takeAll[V any](mu *sync.Mutex, m *map[string]V) map[string]V {
	mu.Lock()
	defer mu.Unlock()
	all := *m
	*m = map[string]V{}
	return all
}

// dropSessions kills and forgets every session (the daemon went away),
// and lets the sandbox's mount namespace go.
func (sb *sandbox) dropSessions() {
	for _, ss := range takeAll(&sb.smu, &sb.sessions) {
		ss.kill()
	}
	for _, p := range takeAll(&sb.smu, &sb.ptys) {
		p.kill()
	}
	sb.stopInterpreters()
	sb.stopRecordings()
	sb.stopLSPs()
	sb.killLeftBehind()
	sb.space.Close()
}

// replaceLabels is PUT /api/sandbox/{idOrName}/labels: the body's labels
// replace the sandbox's whole set; the answer is the new set.
func (s *Server) replaceLabels(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Labels map[string]string `json:"labels"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.Labels == nil {
		apiError(w, r, http.StatusBadRequest, "labels must be an object")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.live(w, r)
	if sb == nil {
		return
	}
	sb.labels = req.Labels
	sb.updatedAt = time.Now()
	writeJSON(w, http.StatusOK, map[string]any{"labels": sb.labels})
}

// maxAutoArchive is the control plane's longest auto-archive interval
// (minutes), its default configuration.
const maxAutoArchive = 43200

// checkInterval resolves *minutes for the interval named which
// (autostop, autoarchive or autodelete) as the control plane does: a
// negative auto-stop or auto-archive is refused (the message answered),
// an auto-archive of 0 or past the longest is the longest; auto-delete
// takes any value (negative disables it).
func checkInterval(which string, minutes *int) string {
	switch {
	case which == "autostop" && *minutes < 0:
		return "Auto-stop interval must be non-negative"
	case which == "autoarchive" && *minutes < 0:
		return "Auto-archive interval must be non-negative"
	case which == "autoarchive" && (*minutes == 0 || *minutes > maxAutoArchive):
		*minutes = maxAutoArchive
	}
	return ""
}

// setInterval is POST …/autostop/{interval}, …/autoarchive/{interval} or
// …/autodelete/{interval} (which): the interval in minutes, answered with
// the Sandbox object. A value that is not a whole number reaches the
// control plane's database as NaN there, and fails as a 500.
func (s *Server) setInterval(which string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, r *http.Request, _ []byte) {
		minutes, err := strconv.Atoi(r.PathValue("interval"))
		s.mu.Lock()
		defer s.mu.Unlock()
		sb := s.live(w, r)
		if sb == nil {
			return
		}
		if err != nil {
			apiError(w, r, http.StatusInternalServerError, "Internal server error")
			return
		}
		if msg := checkInterval(which, &minutes); msg != "" {
			apiError(w, r, http.StatusBadRequest, msg)
			return
		}
		switch which {
		case "autostop":
			sb.autoStop = minutes
		case "autoarchive":
			sb.autoArchive = minutes
		default:
			sb.autoDelete = minutes
		}
		sb.updatedAt = time.Now()
		writeJSON(w, http.StatusOK, s.dto(sb))
	}
}

// setPublic is POST …/public/{isPublic}: the Sandbox object, public when
// the parameter is true.
func (s *Server) setPublic(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.live(w, r)
	if sb == nil {
		return
	}
	sb.public = r.PathValue("isPublic") == "true"
	sb.updatedAt = time.Now()
	writeJSON(w, http.StatusOK, s.dto(sb))
}

// lastActivity is POST …/last-activity (the SDK's refreshActivity): 201
// with no body.
func (s *Server) lastActivity(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb := s.live(w, r); sb != nil {
		w.WriteHeader(http.StatusCreated)
	}
}
