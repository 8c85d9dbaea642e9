package daytonatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
)

// snapshot is a snapshot of the organization, or a general one (the
// server's built-in snapshots, which every organization may use and none
// may delete). One made from an image holds this machine's system (the
// image is not pulled); one made from a sandbox holds a copy of its files.
type snapshot struct {
	id, name, imageName string
	general             bool
	state               string
	next                string    // the state a transition under way ends in
	until               time.Time // when it ends
	entrypoint          []string
	cpu, mem, disk      int
	dir                 string // the sandbox's files at the snapshot; "" for an image
	created, updated    time.Time
}

// imageNamePattern is the control plane's rule for image and snapshot
// names.
var imageNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_.\-:]+(/[a-zA-Z0-9_.\-:]+)*(@sha256:[a-f0-9]{64})?$`)

// uuidPattern is a UUID, as the control plane's ParseUUIDPipe takes it.
var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// settleSnapshot ends a snapshot's transition whose time has come (the
// caller holds s.mu); a removed snapshot leaves the table.
func (s *Server) settleSnapshot(sn *snapshot) {
	if sn.next == "" || time.Now().Before(sn.until) {
		return
	}
	sn.state, sn.next, sn.updated = sn.next, "", time.Now().UTC()
	if sn.state == "removed" {
		s.images = slices.DeleteFunc(s.images, func(x *snapshot) bool { return x == sn })
		if sn.dir != "" {
			_ = os.RemoveAll(sn.dir)
		}
	}
}

// moveSnapshot starts a transition through via to to, instant without a
// transition time (the caller holds s.mu).
func (s *Server) moveSnapshot(sn *snapshot, via, to string) {
	sn.state, sn.next, sn.until, sn.updated = via, to, time.Now().Add(s.transition), time.Now().UTC()
	s.settleSnapshot(sn)
}

// findSnapshots answers the snapshots a reference names: by name, or by
// id when it is a UUID, the settled ones (the caller holds s.mu).
func (s *Server) findSnapshots(ref string) []*snapshot {
	var out []*snapshot
	for _, sn := range slices.Clone(s.images) {
		s.settleSnapshot(sn)
	}
	for _, sn := range s.images {
		if sn.name == ref || uuidPattern.MatchString(ref) && sn.id == ref {
			out = append(out, sn)
		}
	}
	return out
}

// sandboxSnapshot resolves a create's snapshot as the control plane does:
// by name or id, an active one first; none is the dashboard advice, one
// not active names its state. It answers the files to copy ("" for an
// image's).
func (s *Server) sandboxSnapshot(ref string) (files string, msg string) {
	found := s.findSnapshots(ref)
	if len(found) == 0 {
		return "", fmt.Sprintf("Snapshot %s not found. Did you add it through the Daytona Dashboard?", ref)
	}
	sn := found[0]
	if i := slices.IndexFunc(found, func(x *snapshot) bool { return x.state == "active" }); i >= 0 {
		sn = found[i]
	}
	if sn.state != "active" {
		return "", fmt.Sprintf("Snapshot %s is %s", ref, sn.state)
	}
	return sn.dir, ""
}

// dto is the Snapshot object of the control plane's answers.
func (sn *snapshot) dto() map[string]any {
	m := map[string]any{"id": sn.id, "general": sn.general, "name": sn.name, "state": sn.state,
		"size": nil, "entrypoint": sn.entrypoint, "cpu": sn.cpu, "gpu": 0, "mem": sn.mem, "disk": sn.disk,
		"errorReason": nil, "createdAt": sn.created.Format(time.RFC3339Nano), "updatedAt": sn.updated.Format(time.RFC3339Nano),
		"lastUsedAt": nil, "regionIds": []string{"us"}, "sandboxClass": "container"}
	if sn.imageName != "" {
		m["imageName"] = sn.imageName
	}
	if !sn.general {
		m["organizationId"] = "org-paddock-test"
	}
	return m
}

// newSnapshot records a snapshot of the organization (the caller holds
// s.mu).
func (s *Server) newSnapshot(name, image string, entrypoint []string, cpu, mem, disk int, dir string) *snapshot {
	now := time.Now().UTC()
	sn := &snapshot{id: newID(), name: name, imageName: image, entrypoint: entrypoint, cpu: cpu, mem: mem, disk: disk,
		dir: dir, created: now, updated: now}
	s.images = append(s.images, sn)
	return sn
}

// checkImageName is the control plane's refusal of an image name, or "".
func checkImageName(name string) string {
	if image, digest, ok := strings.Cut(name, "@sha256:"); ok {
		if image == "" || !regexp.MustCompile(`^[a-f0-9]{64}$`).MatchString(digest) {
			return "Invalid digest format. Must be image@sha256:64_hex_characters"
		}
		return ""
	}
	switch {
	case !strings.Contains(name, ":") || strings.TrimRight(name, " \t") != name || strings.HasSuffix(name, ":"):
		return "Image name must include a tag (e.g., ubuntu:22.04) or digest (@sha256:...)"
	case strings.HasSuffix(name, ":latest"):
		return `Images with tag ":latest" are not allowed`
	case !imageNamePattern.MatchString(name):
		return "Invalid image name format. Must be lowercase, may contain digits, dots, dashes, and single slashes between components"
	}
	return ""
}

// createSnapshot is POST /api/snapshots {name, imageName, entrypoint,
// cpu, memory, disk}: an image's snapshot, pending until it is active
// (the image is not pulled: a sandbox made from it runs on this machine's
// system). A build (buildInfo) is refused: nothing here builds images.
func (s *Server) createSnapshot(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Name       string          `json:"name"`
		ImageName  string          `json:"imageName"`
		Entrypoint []string        `json:"entrypoint"`
		CPU        *int            `json:"cpu"`
		Memory     *int            `json:"memory"`
		Disk       *int            `json:"disk"`
		BuildInfo  json.RawMessage `json:"buildInfo"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		apiError(w, r, http.StatusBadRequest, "Invalid request body")
		return
	}
	var msg string
	switch {
	case len(req.BuildInfo) > 0 && string(req.BuildInfo) != "null" && req.ImageName != "":
		msg = "Cannot specify an image name when using a build info entry"
	case len(req.BuildInfo) > 0 && string(req.BuildInfo) != "null":
		apiError(w, r, http.StatusNotImplemented, "Building snapshots is not supported by this server")
		return
	case req.ImageName == "":
		msg = "Must specify an image name when not using a build info entry"
	case !imageNamePattern.MatchString(req.Name):
		msg = "Invalid snapshot name format. May contain letters, digits, dots, colons, and dashes"
	default:
		msg = checkImageName(req.ImageName)
	}
	if msg != "" {
		apiError(w, r, http.StatusBadRequest, msg)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sn := range s.findSnapshots(req.Name) {
		if !sn.general {
			apiError(w, r, http.StatusConflict, fmt.Sprintf("Snapshot with name %q already exists for this organization", req.Name))
			return
		}
	}
	entrypoint := slices.DeleteFunc(slices.Clone(req.Entrypoint), func(c string) bool { return strings.TrimSpace(c) == "" })
	if len(entrypoint) == 0 {
		entrypoint = nil
	}
	sn := s.newSnapshot(req.Name, req.ImageName, entrypoint, orDefault(req.CPU, 1), orDefault(req.Memory, 1), orDefault(req.Disk, 3), "")
	sn.state = "pending"
	dto := sn.dto()
	s.moveSnapshot(sn, "pending", "active")
	writeJSON(w, http.StatusOK, dto)
}

// getSnapshot is GET /api/snapshots/{idOrName}.
func (s *Server) getSnapshot(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	found := s.findSnapshots(r.PathValue("id"))
	if len(found) == 0 {
		apiError(w, r, http.StatusNotFound, fmt.Sprintf("Snapshot %s not found", r.PathValue("id")))
		return
	}
	writeJSON(w, http.StatusOK, found[0].dto())
}

// listSnapshots is GET /api/snapshots?page&limit&name: the organization's
// snapshots newest first, then the general ones; a name filters by a
// case-blind substring; {items, total, page, totalPages}.
func (s *Server) listSnapshots(w http.ResponseWriter, r *http.Request, _ []byte) {
	q := r.URL.Query()
	page, limit := 1, 10
	var invalid []string
	for _, p := range []struct {
		name string
		v    *int
		max  int
	}{{"page", &page, 0}, {"limit", &limit, 200}} {
		raw := q.Get(p.name)
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		switch {
		case err != nil || n < 1:
			invalid = append(invalid, p.name+" must not be less than 1")
		case p.max > 0 && n > p.max:
			invalid = append(invalid, fmt.Sprintf("%s must not be greater than %d", p.name, p.max))
		default:
			*p.v = n
		}
	}
	if len(invalid) > 0 {
		apiError(w, r, http.StatusBadRequest, strings.Join(invalid, ", "))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.findSnapshots("")
	filter := strings.ToLower(q.Get("name"))
	var all []*snapshot
	for _, sn := range s.images {
		if strings.Contains(strings.ToLower(sn.name), filter) {
			all = append(all, sn)
		}
	}
	slices.SortStableFunc(all, func(a, b *snapshot) int {
		if a.general != b.general {
			if a.general {
				return 1
			}
			return -1
		}
		return b.created.Compare(a.created)
	})
	items := []map[string]any{}
	for i := (page - 1) * limit; i < len(all) && i < page*limit; i++ {
		items = append(items, all[i].dto())
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": len(all), "page": page,
		"totalPages": (len(all) + limit - 1) / limit})
}

// snapshotByID is the route's snapshot by its UUID, answering the
// control plane's 400 for a malformed id and 404 for none (the caller
// holds s.mu).
func (s *Server) snapshotByID(w http.ResponseWriter, r *http.Request) *snapshot {
	id := r.PathValue("id")
	if !uuidPattern.MatchString(id) {
		apiError(w, r, http.StatusBadRequest, "Validation failed (uuid is expected)")
		return nil
	}
	for _, sn := range s.findSnapshots(id) {
		if sn.id == id {
			return sn
		}
	}
	apiError(w, r, http.StatusNotFound, fmt.Sprintf("Snapshot %s not found", id))
	return nil
}

// deleteSnapshot is DELETE /api/snapshots/{id}: the snapshot is removing,
// then gone; a general one may not be deleted (403).
func (s *Server) deleteSnapshot(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn := s.snapshotByID(w, r)
	switch {
	case sn == nil:
	case sn.general:
		apiError(w, r, http.StatusForbidden, "You cannot delete a general snapshot")
	default:
		s.moveSnapshot(sn, "removing", "removed")
		w.WriteHeader(http.StatusOK)
	}
}

// deactivateSnapshot is POST /api/snapshots/{id}/deactivate: inactive (a
// no-op when it is already).
func (s *Server) deactivateSnapshot(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sn := s.snapshotByID(w, r); sn != nil {
		if sn.state != "inactive" {
			sn.state, sn.next, sn.updated = "inactive", "", time.Now().UTC()
		}
		w.WriteHeader(http.StatusOK)
	}
}

// activationCooldown is how long after a change of state an inactive
// snapshot refuses activation (the deactivation is still under way).
const activationCooldown = 10 * time.Minute

// activateSnapshot is POST /api/snapshots/{id}/activate: an inactive
// snapshot becomes active again, once its deactivation is ten minutes old.
func (s *Server) activateSnapshot(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn := s.snapshotByID(w, r)
	switch {
	case sn == nil:
	case sn.state == "active":
		apiError(w, r, http.StatusBadRequest, fmt.Sprintf("Snapshot %s is already active", sn.id))
	case sn.state != "inactive":
		apiError(w, r, http.StatusBadRequest, fmt.Sprintf("Snapshot %s cannot be activated - it is in %s state", sn.id, sn.state))
	case time.Since(sn.updated) < activationCooldown:
		apiError(w, r, http.StatusBadRequest, "Snapshot deactivation is still in progress. Please try again in a few minutes.")
	default:
		sn.state, sn.updated = "active", time.Now().UTC()
		writeJSON(w, http.StatusOK, sn.dto())
	}
}

// snapshotSandbox is POST /api/sandbox/{idOrName}/snapshot {name}: a
// started or stopped sandbox is snapshotting while its files are copied
// into a new snapshot of that name, then back in its state. The Sandbox
// object answers, snapshotting.
func (s *Server) snapshotSandbox(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Name          string `json:"name"`
		IncludeMemory bool   `json:"includeMemory"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.Name == "" {
		apiError(w, r, http.StatusBadRequest, "name should not be empty, name must be a string")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.live(w, r)
	switch {
	case sb == nil:
		return
	case sb.state != "started" && sb.state != "stopped":
		apiError(w, r, http.StatusBadRequest, "Sandbox must be in started or stopped state to create a snapshot")
		return
	case busy(sb):
		apiError(w, r, http.StatusConflict, stateConflict)
		return
	case req.IncludeMemory:
		apiError(w, r, http.StatusBadRequest, "includeMemory is only supported for Windows sandboxes")
		return
	}
	for _, sn := range s.findSnapshots(req.Name) {
		if !sn.general {
			apiError(w, r, http.StatusConflict, fmt.Sprintf("Snapshot with name %q already exists for this organization", req.Name))
			return
		}
	}
	dir := filepath.Join(s.Root(), "snapshots", newID())
	err := os.MkdirAll(filepath.Dir(dir), 0o700)
	if err == nil {
		err = stubfs.CopyTree(sb.space.Root(), dir)
	}
	if err != nil {
		apiError(w, r, http.StatusInternalServerError, "Failed to create snapshot")
		return
	}
	sn := s.newSnapshot(req.Name, "", nil, sb.cpu, sb.mem, sb.disk, dir)
	sn.state = "active"
	previous := sb.state
	s.begin(sb, "snapshotting", previous, s.transition)
	dto := s.dto(sb)
	dto["state"] = "snapshotting"
	writeJSON(w, http.StatusOK, dto)
}
