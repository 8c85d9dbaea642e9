package e2btest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// sandbox is one sandbox of the server.
type sandbox struct {
	sandboxConfig
	s         *Server
	id        string
	clientID  string
	state     string // "running" or "paused"
	startedAt time.Time
	endAt     time.Time
	space     *stubfs.Space // its filesystem, as envd's processes and its file routes see it
	procs     *processTable
	token     string            // the envd access token of a secure sandbox ("" = none)
	owners    map[string]string // path inside -> the username /files wrote it as
	cpu       cpuMark           // CPU time at the last metrics sample, under sampling
	sampling  sync.Mutex        // one metrics sample at a time
}

// with runs f on sandbox id, under the server's lock, if it exists.
func (s *Server) with(id string, f func(sb *sandbox)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb := s.sandboxes[id]; sb != nil {
		f(sb)
	}
}

// Owner is the user /files last wrote path (absolute, inside sandbox id)
// as, or "".
func (s *Server) Owner(id, path string) (v string) {
	s.with(id, func(sb *sandbox) { v = sb.owners[path] })
	return v
}

// AccessToken is the envd access token of secure sandbox id, or "".
func (s *Server) AccessToken(id string) (v string) {
	s.with(id, func(sb *sandbox) { v = sb.token })
	return v
}

// Sandboxes answers the ids of the live sandboxes (running or paused).
func (s *Server) Sandboxes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.sandboxes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// State answers a sandbox's state ("running", "paused"), or "" when it
// does not exist.
func (s *Server) State(id string) (v string) {
	s.with(id, func(sb *sandbox) { v = sb.state })
	return v
}

// EndAt answers when a sandbox's TTL runs out.
func (s *Server) EndAt(id string) (v time.Time) {
	s.with(id, func(sb *sandbox) { v = sb.endAt })
	return v
}

// Now answers the server's clock.
func (s *Server) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

// Advance moves the server's clock by d. A sandbox whose TTL runs out is
// paused if it was created with autoPause, else killed.
func (s *Server) Advance(d time.Duration) {
	s.mu.Lock()
	s.now = s.now.Add(d)
	var pause, kill []*sandbox
	for id, sb := range s.sandboxes {
		if sb.state != "running" || s.now.Before(sb.endAt) {
			continue
		}
		if sb.autoPause {
			sb.state = "paused"
			pause = append(pause, sb)
		} else {
			delete(s.sandboxes, id)
			kill = append(kill, sb)
		}
	}
	s.mu.Unlock()
	for _, sb := range pause {
		sb.freeze()
	}
	for _, sb := range kill {
		sb.killAll()
	}
}

// freeze is a pause: processes stop where they are (a memory snapshot
// keeps them) and every open process stream is cut.
func (sb *sandbox) freeze() {
	sb.procs.signalAll(stubproc.SIGSTOP)
	sb.procs.cutStreams()
}

// create is POST /sandboxes, and the current SDKs' POST /v2/sandboxes,
// whose sandboxes are secure (an envd access token) unless the body says
// "secure": false; the first form's are secure only when it says true.
func (s *Server) create(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		TemplateID string            `json:"templateID"`
		Timeout    *int              `json:"timeout"`
		AutoPause  bool              `json:"autoPause"`
		Metadata   map[string]string `json:"metadata"`
		EnvVars    map[string]string `json:"envVars"`
		Network    json.RawMessage   `json:"network"`
		Secure     *bool             `json:"secure"`
		Mounts     []volumeMount     `json:"volumeMounts"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.TemplateID == "" {
		apiError(w, http.StatusBadRequest, "Error when parsing request: templateID is required")
		return
	}
	files, status, msg := s.templateFiles(req.TemplateID)
	if status != 0 {
		apiError(w, status, msg)
		return
	}
	ttl, ok := s.timeout(w, req.Timeout)
	if !ok {
		return
	}
	if len(req.Network) > 0 {
		if msg := checkNetwork(req.Network); msg != "" {
			apiError(w, http.StatusBadRequest, msg)
			return
		}
	}
	binds, msg := s.volumeBinds(req.Mounts)
	if msg != "" {
		apiError(w, http.StatusBadRequest, msg)
		return
	}
	secure := req.Secure != nil && *req.Secure || req.Secure == nil && strings.HasPrefix(r.URL.Path, "/v2/")
	sb, err := s.newSandbox(sandboxConfig{template: req.TemplateID, metadata: req.Metadata, envVars: req.EnvVars,
		autoPause: req.AutoPause, network: req.Network, mounts: req.Mounts, binds: binds}, ttl, secure, files)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "creating the sandbox failed")
		return
	}
	writeJSON(w, http.StatusCreated, sb.created())
}

// timeout reads a new sandbox's time to live in seconds (default 15),
// answering E2B's 400 for one not above zero or above the maximum.
func (s *Server) timeout(w http.ResponseWriter, seconds *int) (time.Duration, bool) {
	ttl := 15 * time.Second
	if seconds != nil {
		if *seconds <= 0 {
			apiError(w, http.StatusBadRequest, "Timeout must be greater than 0")
			return 0, false
		}
		ttl = time.Duration(*seconds) * time.Second
	}
	if ttl > s.maxTTL {
		s.tooLong(w)
		return 0, false
	}
	return ttl, true
}

// sandboxConfig is what a new sandbox takes from its create (or from the
// sandbox a fork copies).
type sandboxConfig struct {
	template          string
	metadata, envVars map[string]string
	autoPause         bool
	network           json.RawMessage
	mounts            []volumeMount // the volumes it mounts, as create named them
	binds             []stubfs.Bind // where their files show in it
}

// newSandbox starts a running sandbox from like's template, metadata,
// environment, auto-pause and network, its files a copy of files (none:
// the base template's), secure (with an envd access token) if asked.
func (s *Server) newSandbox(like sandboxConfig, ttl time.Duration, secure bool, files string) (*sandbox, error) {
	id := "i" + randomID(20)
	space, err := stubfs.NewSpace(stubfs.Config{Root: filepath.Join(s.Root(), id, "fs"), Scratch: filepath.Join(s.Root(), id, "stubfs"),
		Users: users, Mapped: s.mapped, Binds: like.binds})
	if err != nil {
		return nil, err
	}
	if files != "" {
		if err := stubfs.CopyTree(files, space.Root()); err != nil {
			space.Retire()
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := &sandbox{sandboxConfig: like, s: s, id: id, clientID: randomID(8), state: "running", startedAt: s.now,
		endAt: s.now.Add(ttl), space: space, owners: map[string]string{}}
	sb.procs = newProcessTable(sb)
	if secure {
		sb.token = randomID(32)
	}
	s.sandboxes[id] = sb
	return sb, nil
}

// created is the Sandbox object of create and connect answers; a secure
// sandbox's carries its envd access token.
func (sb *sandbox) created() map[string]any {
	m := map[string]any{"templateID": sb.template, "sandboxID": sb.id, "alias": sb.template, "clientID": sb.clientID,
		"envdVersion": EnvdVersion, "domain": nil}
	if sb.token != "" {
		m["envdAccessToken"] = sb.token
	}
	return m
}

// listed is a sandbox's entry in a listing (the caller holds s.mu).
func (sb *sandbox) listed() map[string]any {
	m := map[string]any{"templateID": sb.template, "alias": sb.template, "sandboxID": sb.id, "clientID": sb.clientID,
		"startedAt": sb.startedAt.Format(time.RFC3339Nano), "endAt": sb.endAt.Format(time.RFC3339Nano),
		"cpuCount": sandboxCPUs, "memoryMB": sandboxMemoryMB, "diskSizeMB": sandboxDiskMB, "state": sb.state, "envdVersion": EnvdVersion, "volumeMounts": sb.volumeMounts()}
	if len(sb.metadata) > 0 {
		m["metadata"] = sb.metadata
	}
	return m
}

// parseMetadata reads a metadata filter: pairs joined by &, each key and
// value escaped. false for a malformed filter.
func parseMetadata(q string) (map[string]string, bool) {
	out := map[string]string{}
	if q == "" {
		return out, true
	}
	for _, pair := range strings.Split(q, "&") {
		parts := strings.Split(pair, "=")
		if len(parts) != 2 {
			return nil, false
		}
		k, err1 := url.QueryUnescape(parts[0])
		v, err2 := url.QueryUnescape(parts[1])
		if err1 != nil || err2 != nil {
			return nil, false
		}
		out[k] = v
	}
	return out, true
}

// list is GET /v2/sandboxes: filtered by metadata (all pairs, exactly) and
// state (default both), newest first then by id (asc reverses both), paged
// by limit with an opaque X-Next-Token while more remain.
func (s *Server) list(w http.ResponseWriter, r *http.Request, _ []byte) {
	q := r.URL.Query()
	filter, ok := parseMetadata(q.Get("metadata"))
	if !ok {
		apiError(w, http.StatusBadRequest, "Error parsing metadata")
		return
	}
	states := map[string]bool{"running": true, "paused": true}
	if v := q.Get("state"); v != "" {
		states = map[string]bool{}
		for _, st := range strings.Split(v, ",") {
			if st != "running" && st != "paused" {
				apiError(w, http.StatusBadRequest, "invalid state "+strconv.Quote(st))
				return
			}
			states[st] = true
		}
	}
	order := q.Get("order")
	switch order {
	case "":
		order = "desc"
	case "asc", "desc":
	default:
		apiError(w, http.StatusBadRequest, "invalid order")
		return
	}
	limit, ok := pageLimit(w, q.Get("limit"), "limit must be between 1 and 100")
	if !ok {
		return
	}
	s.mu.Lock()
	var all []*sandbox
	for _, sb := range s.sandboxes {
		if states[sb.state] && matches(sb.metadata, filter) {
			all = append(all, sb)
		}
	}
	slices.SortFunc(all, func(a, b *sandbox) int {
		c := b.startedAt.Compare(a.startedAt)
		if c == 0 {
			c = strings.Compare(a.id, b.id)
		}
		if order == "asc" {
			c = -c
		}
		return c
	})
	if tok := q.Get("nextToken"); tok != "" {
		i, ok := afterToken(all, tok, order)
		if !ok {
			s.mu.Unlock()
			apiError(w, http.StatusBadRequest, "Invalid next token")
			return
		}
		all = all[i:]
	}
	page := all[:min(limit, len(all))]
	out := make([]map[string]any, 0, len(page))
	for _, sb := range page {
		out = append(out, sb.listed())
	}
	if len(all) > len(page) {
		w.Header().Set("X-Next-Token", token(page[len(page)-1], order))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// pageLimit reads a listing's limit: 1 to 100, 100 when absent; any other
// value answers 400 with msg.
func pageLimit(w http.ResponseWriter, v, msg string) (int, bool) {
	if v == "" {
		return 100, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 100 {
		apiError(w, http.StatusBadRequest, msg)
		return 0, false
	}
	return n, true
}

// matches reports whether metadata holds every pair of filter.
func matches(metadata, filter map[string]string) bool {
	if len(filter) > 0 && len(metadata) == 0 {
		return false
	}
	for k, v := range filter {
		if metadata[k] != v {
			return false
		}
	}
	return true
}

// token is the cursor after sb: base64url of its start time and id (and
// the order, when ascending).
func token(sb *sandbox, order string) string {
	t := sb.startedAt.Format(time.RFC3339Nano) + "__" + sb.id
	if order == "asc" {
		t += "__asc"
	}
	return base64.URLEncoding.EncodeToString([]byte(t))
}

// afterToken is the index of the first sandbox after tok's cursor in all.
func afterToken(all []*sandbox, tok, order string) (int, bool) {
	raw, err := base64.URLEncoding.DecodeString(tok)
	if err != nil {
		return 0, false
	}
	parts := strings.Split(string(raw), "__")
	if len(parts) < 2 || (len(parts) == 3) != (order == "asc") || (len(parts) == 3 && parts[2] != "asc") {
		return 0, false
	}
	at, err := time.Parse(time.RFC3339Nano, parts[0])
	if err != nil {
		return 0, false
	}
	for i, sb := range all {
		c := at.Compare(sb.startedAt)
		if c == 0 {
			c = strings.Compare(sb.id, parts[1])
		}
		if order == "asc" {
			c = -c
		}
		if c > 0 || (c == 0 && sb.id != parts[1] && sb.startedAt.Equal(at)) {
			return i, true
		}
	}
	return len(all), true
}

// listLegacy is the deprecated GET /sandboxes: running ones, unpaged.
func (s *Server) listLegacy(w http.ResponseWriter, r *http.Request, _ []byte) {
	filter, ok := parseMetadata(r.URL.Query().Get("metadata"))
	if !ok {
		apiError(w, http.StatusBadRequest, "Error parsing metadata")
		return
	}
	s.mu.Lock()
	out := []map[string]any{}
	for _, sb := range s.sandboxes {
		if sb.state == "running" && matches(sb.metadata, filter) {
			out = append(out, sb.listed())
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// lookup finds the sandbox of the route's id; it answers E2B's 400 for an
// id of more than two dash-separated parts and 404 for an unknown one.
func (s *Server) lookup(w http.ResponseWriter, r *http.Request) *sandbox {
	id := r.PathValue("id")
	parts := strings.Split(id, "-")
	if len(parts) > 2 {
		apiError(w, http.StatusBadRequest, "Invalid sandbox ID")
		return nil
	}
	s.mu.Lock()
	sb := s.sandboxes[parts[0]]
	s.mu.Unlock()
	if sb == nil {
		notFound(w, parts[0])
	}
	return sb
}

// get is GET /sandboxes/{id}.
func (s *Server) get(w http.ResponseWriter, r *http.Request, _ []byte) {
	sb := s.lookup(w, r)
	if sb == nil {
		return
	}
	s.mu.Lock()
	m := sb.listed()
	onTimeout := "kill"
	if sb.autoPause {
		onTimeout = "pause"
	}
	m["lifecycle"] = map[string]any{"autoResume": false, "onTimeout": onTimeout}
	m["domain"] = nil
	if sb.token != "" {
		m["envdAccessToken"] = sb.token
	}
	if len(sb.network) > 0 {
		m["network"] = sb.network
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, m)
}

// kill is DELETE /sandboxes/{id}: running or paused, the sandbox is gone.
func (s *Server) kill(w http.ResponseWriter, r *http.Request, _ []byte) {
	sb := s.lookup(w, r)
	if sb == nil {
		return
	}
	s.mu.Lock()
	delete(s.sandboxes, sb.id)
	s.mu.Unlock()
	sb.killAll()
	w.WriteHeader(http.StatusNoContent)
}

// readTimeout reads a {"timeout": seconds} body; false when it is missing
// or malformed.
func readTimeout(body []byte) (int, bool) {
	var req struct {
		Timeout *int `json:"timeout"`
	}
	if json.Unmarshal(body, &req) != nil || req.Timeout == nil {
		return 0, false
	}
	return *req.Timeout, true
}

// setTimeout is POST /sandboxes/{id}/timeout: the TTL is overwritten
// (shorter too), capped at the maximum; a paused sandbox is not live, so
// 404.
func (s *Server) setTimeout(w http.ResponseWriter, r *http.Request, body []byte) {
	sb := s.lookup(w, r)
	if sb == nil {
		return
	}
	secs, ok := readTimeout(body)
	if !ok {
		apiError(w, http.StatusBadRequest, "Error when parsing request: timeout is required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb.state != "running" {
		notFound(w, sb.id)
		return
	}
	sb.endAt = s.now.Add(min(time.Duration(max(secs, 0))*time.Second, s.maxTTL))
	w.WriteHeader(http.StatusNoContent)
}

// pause is POST /sandboxes/{id}/pause: processes are frozen and open
// process streams cut; 409 when already paused.
func (s *Server) pause(w http.ResponseWriter, r *http.Request, _ []byte) {
	sb := s.lookup(w, r)
	if sb == nil {
		return
	}
	s.mu.Lock()
	if sb.state == "paused" {
		s.mu.Unlock()
		apiError(w, http.StatusConflict, fmt.Sprintf("Sandbox '%s' cannot be paused while in 'paused' state", sb.id))
		return
	}
	sb.state = "paused"
	s.mu.Unlock()
	sb.freeze()
	w.WriteHeader(http.StatusNoContent)
}

// connect is POST /sandboxes/{id}/connect: a running sandbox answers 200
// (its TTL only extended), a paused one is resumed, 201.
func (s *Server) connect(w http.ResponseWriter, r *http.Request, body []byte) {
	sb := s.lookup(w, r)
	if sb == nil {
		return
	}
	secs, ok := readTimeout(body)
	if !ok {
		secs = 15 // the SDK's v2 form sends {}
	}
	if time.Duration(secs)*time.Second > s.maxTTL {
		s.tooLong(w)
		return
	}
	s.mu.Lock()
	status := http.StatusOK
	if sb.state == "paused" {
		sb.state, status = "running", http.StatusCreated
		sb.endAt = s.now
		sb.procs.signalAll(stubproc.SIGCONT)
	}
	if end := s.now.Add(time.Duration(max(secs, 0)) * time.Second); end.After(sb.endAt) {
		sb.endAt = end
	}
	out := sb.created()
	s.mu.Unlock()
	writeJSON(w, status, out)
}

// network is PUT /sandboxes/{id}/network: the body replaces the policy.
func (s *Server) network(w http.ResponseWriter, r *http.Request, body []byte) {
	sb := s.lookup(w, r)
	if sb == nil {
		return
	}
	if msg := checkNetwork(body); msg != "" {
		apiError(w, http.StatusBadRequest, msg)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb.state != "running" {
		notFound(w, sb.id)
		return
	}
	sb.network = append(json.RawMessage(nil), body...)
	w.WriteHeader(http.StatusNoContent)
}

// Network answers the last network policy body a sandbox was given.
func (s *Server) Network(id string) (v string) {
	s.with(id, func(sb *sandbox) { v = string(sb.network) })
	return v
}

// Egress reports whether sandbox id may reach host under its stored
// policy, as E2B's egress proxy decides (the stand-in for a real request
// out): an allowed domain (or *.suffix) passes, anything else is cut when
// 0.0.0.0/0 is denied; with no policy everything passes.
func (s *Server) Egress(id, host string) bool {
	var cfg struct {
		AllowOut []string `json:"allowOut"`
		DenyOut  []string `json:"denyOut"`
	}
	if err := json.Unmarshal([]byte(s.Network(id)), &cfg); err != nil {
		return s.State(id) != "" // no policy stored
	}
	for _, a := range cfg.AllowOut {
		if a == host || (strings.HasPrefix(a, "*.") && strings.HasSuffix(host, a[1:])) {
			return true
		}
	}
	return !slices.Contains(cfg.DenyOut, "0.0.0.0/0")
}

// checkNetwork validates a network config as E2B does: deny entries are
// IPs or CIDRs, and allowing a domain needs 0.0.0.0/0 denied.
func checkNetwork(body []byte) string {
	var cfg struct {
		AllowOut []string `json:"allowOut"`
		DenyOut  []string `json:"denyOut"`
	}
	if err := json.Unmarshal(body, &cfg); err != nil {
		return "Error when parsing request: " + err.Error()
	}
	for _, d := range cfg.DenyOut {
		if !isIPOrCIDR(d) {
			return "invalid denied CIDR " + d
		}
	}
	domains := slices.ContainsFunc(cfg.AllowOut, func(a string) bool { return !isIPOrCIDR(a) })
	if domains && !slices.Contains(cfg.DenyOut, "0.0.0.0/0") {
		return "When specifying allowed domains in allow out, you must include 'ALL_TRAFFIC' in deny out to block all other traffic."
	}
	return ""
}

func isIPOrCIDR(s string) bool {
	if net.ParseIP(s) != nil {
		return true
	}
	_, _, err := net.ParseCIDR(s)
	return err == nil
}

// notFound answers E2B's 404 for a sandbox that is not there (or, for the
// routes that need a live one, not running).
func notFound(w http.ResponseWriter, id string) {
	apiError(w, http.StatusNotFound, fmt.Sprintf("Sandbox %q doesn't exist or you don't have access to it", id))
}

// tooLong answers E2B's 400 for a TTL above the maximum.
func (s *Server) tooLong(w http.ResponseWriter) {
	apiError(w, http.StatusBadRequest, fmt.Sprintf("Timeout cannot be greater than %d hours", int(s.maxTTL/time.Hour)))
}
