package spritestest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
	"github.com/paddockhq/paddock/adapters/internal/stubserver"
)

// OrgSlug is the organisation every sprite belongs to.
const OrgSlug = "paddock-test"

// orgID is the organisation part of every sprite URL.
const orgID = "p4dd0ck"

// nameFormat is the create route's name rule (the name becomes a host
// name). AddSprite bypasses it.
var nameFormat = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// sprite is one machine: its object, its files (a directory), its
// sessions and checkpoints.
type sprite struct {
	id         string
	name       string
	auth       string // url_settings.auth: "sprite" or "public"
	config     map[string]any
	env        map[string]string
	labels     []string
	created    time.Time
	updated    time.Time
	lastActive time.Time // zero: never active (cold)
	status     string    // forced by SetStatus; "" = derived from activity
	dir        string    // the server's directory for this sprite
	coldStart  int       // exec upgrades still to refuse with 503

	space       *stubfs.Space // its files, as its processes and the fs routes see them
	sessions    map[string]*session
	checkpoints []*checkpoint // oldest first
	rules       json.RawMessage
	policies    map[string]json.RawMessage // the privileges and resources policies, by kind, as set
	services    map[string]*service
}

// fsDir is the sprite's filesystem root.
func (sp *sprite) fsDir() string { return filepath.Join(sp.dir, "fs") }

// hostPath is where this machine reaches sprite path p, as the sprite's
// processes see it (stubfs); ".." cannot leave the sprite.
func (sp *sprite) hostPath(p string) (string, error) { return sp.space.Path(p) }

// The sprite's users: commands and files are sprite's.
var (
	spriteUser = stubfs.User{Name: "sprite", UID: 1000, GID: 1000, Home: "/home/sprite"}
	users      = []stubfs.User{{Name: "root", Home: "/root"}, spriteUser}
)

// statusAt is the sprite's status word at now: cold until first activity,
// running while a session has a client or within the warm delay of the
// last activity, then warm, then cold.
func (s *Server) statusAt(sp *sprite, now time.Time) string {
	if sp.status != "" {
		return sp.status
	}
	last := sp.lastActive
	for _, ss := range sp.sessions {
		connected, active := ss.activity()
		if connected {
			return "running"
		}
		if active.After(last) {
			last = active
		}
	}
	if last.IsZero() {
		return "cold"
	}
	idle := now.Sub(last)
	switch {
	case idle < s.warm:
		return "running"
	case idle < s.warm+s.cold:
		return "warm"
	}
	return "cold"
}

// object renders the sprite as the API does.
func (s *Server) object(sp *sprite) map[string]any {
	var lastActive any
	if !sp.lastActive.IsZero() {
		lastActive = sp.lastActive.UTC().Format(time.RFC3339)
	}
	return map[string]any{
		"id": sp.id, "name": sp.name, "organization": OrgSlug,
		"status":       s.statusAt(sp, time.Now()),
		"url":          fmt.Sprintf("https://%s-%s.sprites.app", sp.name, orgID),
		"url_settings": map[string]string{"auth": sp.auth},
		"created_at":   sp.created.UTC().Format(time.RFC3339), "updated_at": sp.updated.UTC().Format(time.RFC3339),
		"last_started_at": lastActive, "last_active_at": lastActive,
		"version": nil, "environment_version": nil,
		"config": sp.config, "environment": sp.env, "labels": sp.labels,
	}
}

// newSprite registers a sprite; the caller holds s.mu.
func (s *Server) newSprite(name, auth string) (*sprite, error) {
	now := time.Now()
	sp := &sprite{id: "sprite-" + uuid(), name: name, auth: auth, created: now, updated: now,
		config:   map[string]any{"ram_mb": 8192, "cpus": 8, "region": "ord", "storage_gb": 100},
		env:      map[string]string{},
		labels:   []string{},
		sessions: map[string]*session{}, services: map[string]*service{}, coldStart: s.coldStart,
		rules: json.RawMessage(`[]`), policies: map[string]json.RawMessage{}}
	sp.dir = filepath.Join(s.Root(), sp.id)
	space, err := stubfs.NewSpace(stubfs.Config{Root: sp.fsDir(), Scratch: filepath.Join(sp.dir, "stubfs"), Users: users, Mapped: s.mapped})
	if err != nil {
		return nil, err
	}
	sp.space = space
	// A new sprite already has v0.
	if _, err := s.snapshot(sp, ""); err != nil {
		return nil, err
	}
	s.sprites[name] = sp
	return sp, nil
}

// AddSprite registers a sprite as if it had been created elsewhere, with
// any name (the create route's name rule does not apply), and returns its
// id.
func (s *Server) AddSprite(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp, err := s.newSprite(name, "sprite")
	if err != nil {
		s.t.Fatalf("spritestest: %v", err)
	}
	return sp.id
}

// lock locks the server and finds the request's sprite; without one it
// answers 404 and leaves the server unlocked.
func (s *Server) lock(w http.ResponseWriter, r *http.Request) (*sprite, bool) {
	s.mu.Lock()
	sp := s.sprites[r.PathValue("name")]
	if sp == nil {
		s.mu.Unlock()
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "sprite not found"})
		return nil, false
	}
	return sp, true
}

// createSprite is POST /v1/sprites.
func (s *Server) createSprite(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Name            *string                `json:"name"`
		WaitForCapacity *bool                  `json:"wait_for_capacity"`
		URLSettings     *struct{ Auth string } `json:"url_settings"`
		Config          map[string]any         `json:"config"`
		Environment     map[string]string      `json:"environment"`
		Labels          []string               `json:"labels"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string][]string{"errors": {"invalid request body"}})
		return
	}
	if req.Name == nil || !nameFormat.MatchString(*req.Name) {
		writeJSON(w, http.StatusBadRequest, map[string][]string{"errors": {"invalid sprite name format"}})
		return
	}
	auth := "sprite"
	if req.URLSettings != nil {
		if req.URLSettings.Auth != "sprite" && req.URLSettings.Auth != "public" {
			writeJSON(w, http.StatusBadRequest, map[string][]string{"errors": {"invalid url_settings.auth"}})
			return
		}
		auth = req.URLSettings.Auth
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sprites[*req.Name]; ok {
		writeJSON(w, http.StatusConflict, map[string]string{"error": fmt.Sprintf(
			"A sprite named '%s' already exists. Choose a different name.", *req.Name)})
		return
	}
	sp, err := s.newSprite(*req.Name, auth)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "failed to create sprite"})
		return
	}
	for k, v := range req.Config {
		sp.config[k] = v
	}
	if req.Environment != nil {
		sp.env = req.Environment
	}
	if req.Labels != nil {
		sp.labels = req.Labels
	}
	writeJSON(w, http.StatusCreated, s.object(sp))
}

// getSprite is GET /v1/sprites/{name}.
func (s *Server) getSprite(w http.ResponseWriter, r *http.Request, _ []byte) {
	if sp, ok := s.lock(w, r); ok {
		defer s.mu.Unlock()
		writeJSON(w, http.StatusOK, s.object(sp))
	}
}

// updateSprite is PUT /v1/sprites/{name}: url_settings and labels.
func (s *Server) updateSprite(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		URLSettings *struct{ Auth string } `json:"url_settings"`
		Labels      []string               `json:"labels"`
		ClearLabels bool                   `json:"clear_labels"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid request body"})
		return
	}
	if req.URLSettings != nil && req.URLSettings.Auth != "sprite" && req.URLSettings.Auth != "public" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid url_settings.auth"})
		return
	}
	sp, ok := s.lock(w, r)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	if req.URLSettings != nil {
		sp.auth = req.URLSettings.Auth
	}
	if req.ClearLabels {
		sp.labels = []string{}
	}
	if req.Labels != nil {
		sp.labels = req.Labels
	}
	sp.updated = time.Now()
	writeJSON(w, http.StatusOK, s.object(sp))
}

// deleteSprite is DELETE /v1/sprites/{name}: its sessions end, its files go.
func (s *Server) deleteSprite(w http.ResponseWriter, r *http.Request, _ []byte) {
	sp, ok := s.lock(w, r)
	if !ok {
		return
	}
	delete(s.sprites, sp.name)
	sessions, services := sp.sessionList(), sp.serviceList()
	s.mu.Unlock()
	for _, ss := range sessions {
		ss.shutdown()
	}
	s.stopServices(services)
	sp.space.Retire()
	_ = os.RemoveAll(sp.dir)
	w.WriteHeader(http.StatusNoContent)
}

// listSprites is GET /v1/sprites (a watch when NDJSON is asked for): sorted by name, prefix-filtered, pages of
// max_results (clamped to 1..50, default 50) chained by an opaque token.
func (s *Server) listSprites(w http.ResponseWriter, r *http.Request, _ []byte) {
	if strings.Contains(r.Header.Get("Accept"), "application/x-ndjson") {
		s.watchSprites(w, r)
		return
	}
	q := r.URL.Query()
	size := 50
	if v := q.Get("max_results"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid max_results"})
			return
		}
		size = min(max(n, 1), 50)
	}
	after := ""
	if tok := q.Get("continuation_token"); tok != "" {
		name, ok := decodeToken(tok)
		if !ok {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid continuation_token"})
			return
		}
		after = name
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for n := range s.sprites {
		if strings.HasPrefix(n, q.Get("prefix")) && n > after {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	page := names[:min(size, len(names))]
	entries := make([]map[string]any, 0, len(page))
	counts := map[string]int{}
	for _, sp := range s.sprites {
		counts[s.statusAt(sp, time.Now())]++
	}
	for _, n := range page {
		entries = append(entries, s.object(s.sprites[n]))
	}
	var next any
	more := len(names) > len(page)
	if more {
		next = encodeToken(page[len(page)-1])
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"sprites": entries, "has_more": more, "next_continuation_token": next,
		"org": orgCounts(counts),
	})
}

// encodeToken and decodeToken make the opaque continuation token: the last
// name of the page, hex-encoded.
func encodeToken(name string) string { return "tok-" + fmt.Sprintf("%x", name) }

func decodeToken(tok string) (string, bool) {
	hexed, ok := strings.CutPrefix(tok, "tok-")
	if !ok {
		return "", false
	}
	var name []byte
	if _, err := fmt.Sscanf(hexed, "%x", &name); err != nil {
		return "", false
	}
	return string(name), true
}

// SetStatus forces the status word the named sprite reports ("" returns to
// the activity-derived lifecycle).
func (s *Server) SetStatus(name, status string) {
	s.with(name, func(sp *sprite) {
		sp.status = status
	})
}

// with runs f on the named sprite, under the server's lock, if it exists.
func (s *Server) with(name string, f func(sp *sprite)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sp := s.sprites[name]; sp != nil {
		f(sp)
	}
}

// Status is the status word the named sprite reports now ("" if absent).
func (s *Server) Status(name string) (v string) {
	s.with(name, func(sp *sprite) { v = s.statusAt(sp, time.Now()) })
	return v
}

// URLAuth is the named sprite's url_settings.auth ("" if absent).
func (s *Server) URLAuth(name string) (v string) {
	s.with(name, func(sp *sprite) { v = sp.auth })
	return v
}

// Exists reports whether the named sprite exists.
func (s *Server) Exists(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sprites[name] != nil
}

// touch records activity on a sprite; the caller holds s.mu.
func (sp *sprite) touch() { sp.lastActive = time.Now() }

func uuid() string {
	b := stubserver.RandomHex(32)
	return b[0:8] + "-" + b[8:12] + "-" + b[12:16] + "-" + b[16:20] + "-" + b[20:32]
}

// policyRule is one egress rule as Sprites takes it.
type policyRule struct {
	Domain  *string `json:"domain,omitempty"`
	Action  *string `json:"action,omitempty"`
	Include *string `json:"include,omitempty"`
}

// getPolicy is GET /v1/sprites/{name}/policy/network.
func (s *Server) getPolicy(w http.ResponseWriter, r *http.Request, _ []byte) {
	if sp, ok := s.lock(w, r); ok {
		defer s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]json.RawMessage{"rules": sp.rules})
	}
}

// setPolicy is POST /v1/sprites/{name}/policy/network: 204, or 400 for a
// malformed policy.
func (s *Server) setPolicy(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Rules json.RawMessage `json:"rules"`
	}
	if err := json.Unmarshal(body, &req); err != nil || !validRules(req.Rules) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid network policy"})
		return
	}
	if sp, ok := s.lock(w, r); ok {
		defer s.mu.Unlock()
		sp.rules = req.Rules
		w.WriteHeader(http.StatusNoContent)
	}
}

// Policy returns the named sprite's stored rules as sent (nil if absent).
func (s *Server) Policy(name string) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sp := s.sprites[name]; sp != nil {
		return append(json.RawMessage(nil), sp.rules...)
	}
	return nil
}

// validRules checks a policy's shape: each rule a domain with action allow
// or deny, or an include of the defaults preset.
func validRules(raw json.RawMessage) bool {
	var rules []policyRule
	if err := json.Unmarshal(raw, &rules); err != nil || rules == nil {
		return false
	}
	for _, r := range rules {
		switch {
		case r.Include != nil:
			if *r.Include != "defaults" || r.Domain != nil || r.Action != nil {
				return false
			}
		case r.Domain == nil || *r.Domain == "" || r.Action == nil:
			return false
		case *r.Action != "allow" && *r.Action != "deny":
			return false
		}
	}
	return true
}

// restartSprite is POST /v1/sprites/{name}/restart: the machine boots
// again before the answer (a cold boot: sessions end, the services that
// ran start again, the files stay) and the answer names it.
func (s *Server) restartSprite(w http.ResponseWriter, r *http.Request, _ []byte) {
	sp, ok := s.lock(w, r)
	if !ok {
		return
	}
	sessions, services := sp.sessionList(), sp.serviceList()
	sp.touch()
	s.mu.Unlock()
	_ = s.coldBoot(sp, sessions, services, func() error { return nil })
	writeJSON(w, http.StatusOK, map[string]any{"sprite_name": sp.name, "machine_id": machineID(sp),
		"message": "sprite " + sp.name + " restarted"})
}

// checkSprite is GET /v1/sprites/{name}/check: whether the sprite is
// healthy and responding, here always so once it exists.
func (s *Server) checkSprite(w http.ResponseWriter, r *http.Request, _ []byte) {
	start := time.Now()
	sp, ok := s.lock(w, r)
	if !ok {
		return
	}
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"sprite_name": sp.name, "sprite_id": sp.id, "status": "healthy",
		"checked_at": time.Now().UTC().Format(time.RFC3339Nano), "elapsed": time.Since(start).Milliseconds()})
}

// machineID is the id of the machine behind a sprite: Fly machine ids are
// 14 hex digits, derived here from the sprite's id so it stays the same.
func machineID(sp *sprite) string {
	return strings.ReplaceAll(sp.id, "-", "")[len("sprite"):][:14]
}

// The privileges and resources policies: kept and answered as set (`{}`
// until then), their shapes checked, not enforced (a sprite here runs with
// this machine's limits).
var policyShapes = map[string]func(json.RawMessage) bool{
	"privileges": validPrivileges,
	"resources":  validResources,
}

// getOtherPolicy is GET /v1/sprites/{name}/policy/{privileges,resources}.
func (s *Server) getOtherPolicy(w http.ResponseWriter, r *http.Request, _ []byte) {
	if sp, ok := s.lock(w, r); ok {
		defer s.mu.Unlock()
		v := sp.policies[path.Base(r.URL.Path)]
		if v == nil {
			v = json.RawMessage(`{}`)
		}
		writeJSON(w, http.StatusOK, v)
	}
}

// setOtherPolicy is POST /v1/sprites/{name}/policy/{privileges,resources}: 204, or 400 for
// a policy of the wrong shape.
func (s *Server) setOtherPolicy(w http.ResponseWriter, r *http.Request, body []byte) {
	kind := path.Base(r.URL.Path)
	if !policyShapes[kind](body) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid " + kind + " policy"})
		return
	}
	if sp, ok := s.lock(w, r); ok {
		defer s.mu.Unlock()
		sp.policies[kind] = append(json.RawMessage(nil), body...)
		w.WriteHeader(http.StatusNoContent)
	}
}

// deleteOtherPolicy is DELETE /v1/sprites/{name}/policy/{privileges,resources}: back to
// none, 204.
func (s *Server) deleteOtherPolicy(w http.ResponseWriter, r *http.Request, _ []byte) {
	if sp, ok := s.lock(w, r); ok {
		defer s.mu.Unlock()
		delete(sp.policies, path.Base(r.URL.Path))
		w.WriteHeader(http.StatusNoContent)
	}
}

// validPrivileges checks a privileges policy: a known profile, devices as
// strings, noNewPrivileges a boolean, nothing else.
func validPrivileges(raw json.RawMessage) bool {
	var p struct {
		Profile         *string   `json:"profile"`
		Devices         *[]string `json:"devices"`
		NoNewPrivileges *bool     `json:"noNewPrivileges"`
	}
	if !strictJSON(raw, &p) {
		return false
	}
	if p.Profile != nil {
		switch *p.Profile {
		case "", "minimal", "standard", "privileged":
		default:
			return false
		}
	}
	return true
}

// validResources checks a resources policy: memory's limit_mb a positive
// whole number, autoscale a boolean, nothing else.
func validResources(raw json.RawMessage) bool {
	var p struct {
		Memory *struct {
			LimitMB   *int64 `json:"limit_mb"`
			Autoscale *bool  `json:"autoscale"`
		} `json:"memory"`
	}
	if !strictJSON(raw, &p) {
		return false
	}
	return p.Memory == nil || (p.Memory.LimitMB != nil && *p.Memory.LimitMB > 0)
}

// strictJSON decodes one JSON object into v, refusing unknown fields.
func strictJSON(raw json.RawMessage, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v) == nil && !dec.More()
}
