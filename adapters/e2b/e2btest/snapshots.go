package e2btest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/paddockhq/paddock/adapters/internal/stubfs"
)

// teamSlug is the namespace of the server's one team: a snapshot named
// "name" is "e2btest/name".
const teamSlug = "e2btest"

// teamConcurrency is the team's limit of sandboxes at once, which a fork's
// count must stay under (the original holds one).
const teamConcurrency = 20

// baseTemplate is the one template the server has built in.
const baseTemplate = "base"

// defaultTag is the tag a reference without one means.
const defaultTag = "default"

// snapshotTemplate is a template made by snapshots of sandboxes: an id,
// an alias when it was named, and a build per tag.
type snapshotTemplate struct {
	id     string
	alias  string
	builds []*snapshotBuild
}

// snapshotBuild is one snapshot: the files of a sandbox at that moment.
type snapshotBuild struct {
	tag       string
	buildID   string // a UUID; tags assigned to a build share it
	sandboxID string // the sandbox it was taken of
	dir       string // its copy of the sandbox's files
	created   time.Time
}

// names is the template's full names: its team's namespace and alias.
func (t *snapshotTemplate) names() []string {
	if t.alias == "" {
		return []string{}
	}
	return []string{teamSlug + "/" + t.alias}
}

// snapshotID is how E2B names a build: its template's first name, or its
// id, and its tag.
func (t *snapshotTemplate) snapshotID(tag string) string {
	if names := t.names(); len(names) > 0 {
		return names[0] + ":" + tag
	}
	return t.id + ":" + tag
}

var (
	identifierPattern = regexp.MustCompile(`^[a-z0-9-_]+$`)
	tagPattern        = regexp.MustCompile(`^[a-z0-9-_.]+$`)
	sandboxIDPattern  = regexp.MustCompile(`^[a-z0-9]+$`)
)

// parseName reads "namespace/alias:tag", "alias:tag" or "alias" as E2B
// does: each part trimmed and lower-cased, checked, the default tag
// answered as none.
func parseName(input string) (identifier string, tag *string, err error) {
	clean := func(value, what string, re *regexp.Regexp) (string, error) {
		v := strings.ToLower(strings.TrimSpace(value))
		if !re.MatchString(v) {
			return "", fmt.Errorf("invalid %s: %s", what, value)
		}
		return v, nil
	}
	idPart, tagPart, hasTag := strings.Cut(strings.TrimSpace(input), ":")
	if hasTag {
		t, err := clean(tagPart, "tag", tagPattern)
		if err != nil {
			return "", nil, err
		}
		if t != defaultTag {
			tag = &t
		}
	}
	namespace, alias, named := strings.Cut(idPart, "/")
	if !named {
		namespace, alias = "", idPart
	} else if namespace, err = clean(namespace, "namespace", identifierPattern); err != nil {
		return "", nil, err
	}
	if alias, err = clean(alias, "template ID", identifierPattern); err != nil {
		return "", nil, err
	}
	if named {
		return namespace + "/" + alias, tag, nil
	}
	return alias, tag, nil
}

// teamName parses input as parseName does and checks it is in the team's
// namespace, answering the API's 400: what, then the parser's words, or
// the namespace's refusal; ok is false once it has answered.
func teamName(w http.ResponseWriter, input, what string) (identifier string, tag *string, ok bool) {
	identifier, tag, err := parseName(input)
	if err != nil {
		apiError(w, http.StatusBadRequest, what+": "+err.Error())
		return "", nil, false
	}
	if msg := ownNamespace(identifier); msg != "" {
		apiError(w, http.StatusBadRequest, msg)
		return "", nil, false
	}
	return identifier, tag, true
}

// ownNamespace answers E2B's refusal of a name in another team's
// namespace, or "".
func ownNamespace(identifier string) string {
	if ns, _, named := strings.Cut(identifier, "/"); named && ns != teamSlug {
		return fmt.Sprintf("namespace '%s' must match your team '%s'", ns, teamSlug)
	}
	return ""
}

// shortID is a sandbox id from a path, as E2B reads it: the part before
// one '-' (a client id may follow), lower-case letters and digits.
func shortID(id string) (string, bool) {
	parts := strings.Split(id, "-")
	if len(parts) > 2 || !sandboxIDPattern.MatchString(parts[0]) {
		return "", false
	}
	return parts[0], true
}

// pathSandboxID is the route's sandbox id as shortID reads it, answering
// E2B's 400 for one it refuses.
func pathSandboxID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id, ok := shortID(r.PathValue("id"))
	if !ok {
		apiError(w, http.StatusBadRequest, "Invalid sandbox ID")
	}
	return id, ok
}

// findTemplate finds a snapshot template by alias (bare or in the
// team's namespace) or id; the caller holds s.mu.
func (s *Server) findTemplate(identifier string) *snapshotTemplate {
	name := strings.TrimPrefix(identifier, teamSlug+"/")
	if strings.Contains(name, "/") {
		return nil
	}
	for _, t := range s.snapshots {
		if t.alias == name && name != "" || t.id == name {
			return t
		}
	}
	return nil
}

// templateFiles resolves a create's template reference: the base template
// (no files to copy), or a snapshot's build by name or id and tag (its
// files). A reference that resolves to nothing answers its status and
// message.
func (s *Server) templateFiles(ref string) (files string, status int, msg string) {
	identifier, tag, err := parseName(ref)
	if err != nil {
		return "", http.StatusBadRequest, "Invalid template ID: " + err.Error()
	}
	want := defaultTag
	if tag != nil {
		want = *tag
	}
	if identifier == baseTemplate {
		return "", 0, "" // its every tag: the server builds it once
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.findTemplate(identifier)
	if t == nil {
		return "", http.StatusNotFound, fmt.Sprintf("template '%s' not found", ref)
	}
	for _, b := range t.builds {
		if b.tag == want {
			return b.dir, 0, ""
		}
	}
	return "", http.StatusNotFound, fmt.Sprintf("tag '%s' does not exist for template '%s'", want, identifier)
}

// createSnapshot is POST /sandboxes/{id}/snapshots with an optional name
// ("alias" or "alias:tag", in the team's namespace if it has one): the
// running sandbox's files become a build of that template (a name already
// taken gets the new build under its tag) or of a new one. 201 with the
// snapshot's id and names.
func (s *Server) createSnapshot(w http.ResponseWriter, r *http.Request, body []byte) {
	id, ok := pathSandboxID(w, r)
	if !ok {
		return
	}
	var req struct {
		Name *string `json:"name"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		apiError(w, http.StatusBadRequest, "Error when parsing request: "+err.Error())
		return
	}
	alias, tag := "", defaultTag
	if req.Name != nil {
		identifier, t, ok := teamName(w, *req.Name, "Invalid name")
		if !ok {
			return
		}
		_, alias, _ = strings.Cut(identifier, "/")
		if alias == "" {
			alias = identifier
		}
		if t != nil {
			tag = *t
		}
	}
	s.mu.Lock()
	sb := s.sandboxes[id]
	s.mu.Unlock()
	if sb == nil || sb.state != "running" {
		notFound(w, id)
		return
	}
	build := &snapshotBuild{tag: tag, buildID: uuid.NewString(), sandboxID: id, created: time.Now().UTC(),
		dir: filepath.Join(s.Root(), "snapshots", randomID(20))}
	if err := os.MkdirAll(filepath.Dir(build.dir), 0o700); err != nil {
		apiError(w, http.StatusInternalServerError, "Error creating snapshot template")
		return
	}
	if err := stubfs.CopyTree(sb.space.Root(), build.dir); err != nil {
		apiError(w, http.StatusInternalServerError, "Error creating snapshot template")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var t *snapshotTemplate
	if alias != "" {
		t = s.findTemplate(alias)
	}
	if t == nil {
		t = &snapshotTemplate{id: randomID(20), alias: alias}
		s.snapshots = append(s.snapshots, t)
	}
	t.builds = slices.DeleteFunc(t.builds, func(b *snapshotBuild) bool { return b.tag == tag })
	t.builds = append(t.builds, build)
	writeJSON(w, http.StatusCreated, map[string]any{"snapshotID": t.snapshotID(tag), "names": t.names()})
}

// listSnapshots is GET /snapshots: every build, newest first, filtered by
// the sandbox it was taken of and by name (a name without a tag matches
// every tag), paged by limit (1..100, default 100) with X-Next-Token.
func (s *Server) listSnapshots(w http.ResponseWriter, r *http.Request, _ []byte) {
	q := r.URL.Query()
	limit, ok := pageLimit(w, q.Get("limit"), "limit must be between 1 and 100")
	if !ok {
		return
	}
	after, ok := parseCursor(q.Get("nextToken"))
	if !ok {
		apiError(w, http.StatusBadRequest, "Invalid next token")
		return
	}
	var fromSandbox string
	if q.Has("sandboxID") {
		if fromSandbox, ok = shortID(q.Get("sandboxID")); !ok {
			apiError(w, http.StatusBadRequest, "Invalid sandbox ID")
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	templates := s.snapshots
	var tagFilter string
	if q.Has("name") {
		identifier, tag, ok := teamName(w, q.Get("name"), "Invalid name")
		if !ok {
			return
		}
		if _, _, hasTag := strings.Cut(q.Get("name"), ":"); hasTag {
			tagFilter = defaultTag
		}
		if tag != nil {
			tagFilter = *tag
		}
		t := s.findTemplate(identifier)
		if t == nil {
			writeJSON(w, http.StatusOK, []any{})
			return
		}
		templates = []*snapshotTemplate{t}
	}
	type row struct {
		t *snapshotTemplate
		b *snapshotBuild
	}
	var rows []row
	for _, t := range templates {
		for _, b := range t.builds {
			if (fromSandbox == "" || b.sandboxID == fromSandbox) && (tagFilter == "" || b.tag == tagFilter) {
				rows = append(rows, row{t, b})
			}
		}
	}
	key := func(x row) cursor { return cursor{x.b.created, x.t.id + ":" + x.b.tag} }
	slices.SortFunc(rows, func(a, b row) int { return key(b).compare(key(a)) })
	if after != nil {
		rows = slices.DeleteFunc(rows, func(x row) bool { return key(x).compare(*after) >= 0 })
	}
	page := rows[:min(limit, len(rows))]
	out := make([]map[string]any, 0, len(page))
	for _, x := range page {
		out = append(out, map[string]any{"snapshotID": x.t.snapshotID(x.b.tag), "names": x.t.names()})
	}
	if len(rows) > len(page) {
		w.Header().Set("X-Next-Token", key(page[len(page)-1]).String())
	}
	writeJSON(w, http.StatusOK, out)
}

// cursor is a place in a listing newest first: a time, and an id for
// equal times.
type cursor struct {
	at time.Time
	id string
}

func (c cursor) compare(o cursor) int {
	if n := c.at.Compare(o.at); n != 0 {
		return n
	}
	return strings.Compare(c.id, o.id)
}

// String is the cursor as an opaque token.
func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.at.Format(time.RFC3339Nano) + "|" + c.id))
}

// parseCursor reads a token String made; "" is no cursor.
func parseCursor(token string) (*cursor, bool) {
	if token == "" {
		return nil, true
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return nil, false
	}
	at, id, ok := strings.Cut(string(raw), "|")
	t, err := time.Parse(time.RFC3339Nano, at)
	if !ok || err != nil {
		return nil, false
	}
	return &cursor{t, id}, true
}

// deleteTemplate is DELETE /templates/{id}, which the SDK's deleteSnapshot
// calls with a snapshot's id: the whole template goes, every tag (the
// sandboxes made from it keep their files). The built-in template is not
// the team's (403).
func (s *Server) deleteTemplate(w http.ResponseWriter, r *http.Request, _ []byte) {
	ref := r.PathValue("id")
	identifier, _, err := parseName(ref)
	if err != nil {
		apiError(w, http.StatusBadRequest, "Invalid template ID: "+err.Error())
		return
	}
	if identifier == baseTemplate {
		apiError(w, http.StatusForbidden, fmt.Sprintf("You don't have access to template '%s'", identifier))
		return
	}
	s.mu.Lock()
	t := s.findTemplate(identifier)
	if t != nil {
		s.snapshots = slices.DeleteFunc(s.snapshots, func(x *snapshotTemplate) bool { return x == t })
	}
	s.mu.Unlock()
	if t == nil {
		apiError(w, http.StatusNotFound, fmt.Sprintf("template '%s' not found", identifier))
		return
	}
	var errs []error
	for _, b := range t.builds {
		errs = append(errs, os.RemoveAll(b.dir))
	}
	if errors.Join(errs...) != nil {
		apiError(w, http.StatusInternalServerError, "Error when deleting template")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// fork is POST /sandboxes/{id}/fork with an optional count (1..100, under
// the team's concurrency) and timeout: count new sandboxes, each a copy of
// the running original's files with its template, metadata, environment
// and network, the original left as it was. 201 with a result per fork.
func (s *Server) fork(w http.ResponseWriter, r *http.Request, body []byte) {
	id, ok := pathSandboxID(w, r)
	if !ok {
		return
	}
	var req struct {
		Count   *int `json:"count"`
		Timeout *int `json:"timeout"`
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			apiError(w, http.StatusBadRequest, "Error when parsing request: "+err.Error())
			return
		}
	}
	ttl, ok := s.timeout(w, req.Timeout)
	if !ok {
		return
	}
	count := 1
	if req.Count != nil {
		count = *req.Count
	}
	switch {
	case count < 1:
		apiError(w, http.StatusBadRequest, "Count must be at least 1")
		return
	case count > 100:
		apiError(w, http.StatusBadRequest, "Count cannot be greater than 100")
		return
	case count >= teamConcurrency:
		apiError(w, http.StatusBadRequest, fmt.Sprintf("Count must be lower than the maximum number of concurrent sandboxes (%d)", teamConcurrency))
		return
	}
	s.mu.Lock()
	original := s.sandboxes[id]
	var like sandboxConfig
	if original != nil {
		like = original.sandboxConfig
	}
	s.mu.Unlock()
	switch {
	case original == nil:
		notFound(w, id)
		return
	case original.state == "paused":
		apiError(w, http.StatusConflict, fmt.Sprintf("Sandbox '%s' is paused and cannot be forked; resume it first", id))
		return
	}
	results := make([]map[string]any, 0, count)
	for range count {
		sb, err := s.newSandbox(like, ttl, original.token != "", original.space.Root())
		if err != nil {
			s.t.Logf("e2btest: forking %s: %v", id, err)
			results = append(results, map[string]any{"error": map[string]any{"code": 500, "message": "Failed to create sandbox"}})
			continue
		}
		results = append(results, map[string]any{"sandbox": sb.created()})
	}
	writeJSON(w, http.StatusCreated, results)
}
