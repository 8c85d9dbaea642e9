package daytonatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
)

// volume is a volume of the organization: a directory of this server that
// the sandboxes mounting it share (Daytona keeps it in object storage).
type volume struct {
	id, name         string
	state            string
	next             string
	until            time.Time
	dir              string
	created, updated time.Time
	lastUsed         time.Time
}

// mount is one volume of a sandbox, as its create asked for it.
type mount struct {
	VolumeID  string `json:"volumeId"`
	MountPath string `json:"mountPath"`
	Subpath   string `json:"subpath,omitempty"`
}

// settleVolume ends a volume's transition whose time has come (the caller
// holds s.mu).
func (s *Server) settleVolume(v *volume) {
	if v.next == "" || time.Now().Before(v.until) {
		return
	}
	v.state, v.next, v.updated = v.next, "", time.Now().UTC()
	if v.state == "deleted" {
		_ = os.RemoveAll(v.dir)
	}
}

// liveVolumes are the volumes not deleted, settled (the caller holds s.mu).
func (s *Server) liveVolumes() []*volume {
	var out []*volume
	for _, v := range s.volumes {
		s.settleVolume(v)
		if v.state != "deleted" {
			out = append(out, v)
		}
	}
	return out
}

// dto is the Volume object of the control plane's answers.
func (v *volume) dto() map[string]any {
	m := map[string]any{"id": v.id, "name": v.name, "organizationId": "org-paddock-test", "state": v.state,
		"createdAt": v.created.Format(time.RFC3339Nano), "updatedAt": v.updated.Format(time.RFC3339Nano),
		"lastUsedAt": nil, "errorReason": nil}
	if !v.lastUsed.IsZero() {
		m["lastUsedAt"] = v.lastUsed.Format(time.RFC3339Nano)
	}
	return m
}

// createVolume is POST /api/volumes {name}: a volume (named by its id
// when no name is given), pending_create, then ready; a name taken by a
// volume not deleted is 400.
func (s *Server) createVolume(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Name string `json:"name"`
	}
	if len(body) > 0 && json.Unmarshal(body, &req) != nil {
		apiError(w, r, http.StatusBadRequest, "Invalid request body")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := newID()
	name := req.Name
	if name == "" {
		name = id
	}
	for _, v := range s.liveVolumes() {
		if v.name == name {
			apiError(w, r, http.StatusBadRequest, fmt.Sprintf("Volume with name %s already exists", name))
			return
		}
	}
	dir := filepath.Join(s.Root(), "volumes", id)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		apiError(w, r, http.StatusInternalServerError, "Failed to create volume")
		return
	}
	_ = os.Chmod(dir, 0o777) // every user of every sandbox may write, as on the object storage mount
	now := time.Now().UTC()
	v := &volume{id: id, name: name, dir: dir, created: now, updated: now}
	s.volumes = append(s.volumes, v)
	v.state, v.next, v.until = "pending_create", "ready", time.Now().Add(s.transition)
	answer := v.dto()
	s.settleVolume(v)
	writeJSON(w, http.StatusOK, answer)
}

// listVolumes is GET /api/volumes[?includeDeleted=true]: the most recently
// used first, then the newest.
func (s *Server) listVolumes(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := s.liveVolumes()
	if r.URL.Query().Get("includeDeleted") == "true" {
		all = slices.Clone(s.volumes)
	}
	slices.SortStableFunc(all, func(a, b *volume) int {
		if c := b.lastUsed.Compare(a.lastUsed); c != 0 {
			return c
		}
		return b.created.Compare(a.created)
	})
	out := []map[string]any{}
	for _, v := range all {
		out = append(out, v.dto())
	}
	writeJSON(w, http.StatusOK, out)
}

// getVolume is GET /api/volumes/{volumeId}.
func (s *Server) getVolume(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.volumeByID(w, r); v != nil {
		writeJSON(w, http.StatusOK, v.dto())
	}
}

// volumeByID is the route's volume by id, deleted ones too, answering 404
// for none (the caller holds s.mu).
func (s *Server) volumeByID(w http.ResponseWriter, r *http.Request) *volume {
	id := r.PathValue("volumeId")
	for _, v := range s.volumes {
		if v.id == id {
			s.settleVolume(v)
			return v
		}
	}
	apiError(w, r, http.StatusNotFound, fmt.Sprintf("Volume with ID %s not found", id))
	return nil
}

// getVolumeByName is GET /api/volumes/by-name/{name}.
func (s *Server) getVolumeByName(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.liveVolumes() {
		if v.name == r.PathValue("name") {
			writeJSON(w, http.StatusOK, v.dto())
			return
		}
	}
	apiError(w, r, http.StatusNotFound, fmt.Sprintf("Volume with name %s not found", r.PathValue("name")))
}

// deleteVolume is DELETE /api/volumes/{volumeId}: a ready (or errored)
// volume no sandbox uses is pending_delete, then deleted with its files.
func (s *Server) deleteVolume(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.volumeByID(w, r)
	if v == nil {
		return
	}
	if v.state != "ready" && v.state != "error" {
		apiError(w, r, http.StatusBadRequest, "Volume must be in 'ready' or 'error' state in order to be deleted")
		return
	}
	for _, id := range s.order {
		sb := s.sandboxes[id]
		if sb != nil && sb.desired != "destroyed" && slices.ContainsFunc(sb.volumes, func(m mount) bool { return m.VolumeID == v.id }) {
			apiError(w, r, http.StatusConflict, fmt.Sprintf("Volume cannot be deleted because it is in use by one or more sandboxes (e.g. %s)", sb.name))
			return
		}
	}
	v.state, v.next, v.until, v.updated = "pending_delete", "deleted", time.Now().Add(s.transition), time.Now().UTC()
	s.settleVolume(v)
	w.WriteHeader(http.StatusOK)
}

// resolveMounts checks a create's volumes as the control plane does: each
// reference an id or a name of a ready volume, then the mount paths and
// subpaths. It answers them with ids, and the binds that show them (the
// caller holds s.mu).
func (s *Server) resolveMounts(mounts []mount) ([]mount, []stubfs.Bind, int, string) {
	live := s.liveVolumes()
	var binds []stubfs.Bind
	resolved := make([]mount, 0, len(mounts))
	for _, m := range mounts {
		var byID, byName *volume
		for _, v := range live {
			if uuidPattern.MatchString(m.VolumeID) && v.id == strings.ToLower(m.VolumeID) {
				byID = v
			}
			if v.name == m.VolumeID {
				byName = v
			}
		}
		if byID != nil && byName != nil && byID != byName {
			return nil, nil, http.StatusBadRequest, fmt.Sprintf("Volume reference '%s' matches one volume's ID and another volume's name; rename the volume to remove the ambiguity", m.VolumeID)
		}
		v := byID
		if v == nil {
			v = byName
		}
		switch {
		case v == nil:
			return nil, nil, http.StatusNotFound, fmt.Sprintf("Volume '%s' not found", m.VolumeID)
		case v.state != "ready":
			return nil, nil, http.StatusBadRequest, fmt.Sprintf("Volume '%s' is not in a ready state. Current state: %s", v.name, v.state)
		}
		m.VolumeID = v.id
		resolved = append(resolved, m)
		binds = append(binds, stubfs.Bind{Host: filepath.Join(v.dir, filepath.Clean("/"+m.Subpath)), At: m.MountPath})
	}
	if msg := mountPathErrors(resolved); msg != "" {
		return nil, nil, http.StatusBadRequest, msg
	}
	if msg := subpathErrors(resolved); msg != "" {
		return nil, nil, http.StatusBadRequest, msg
	}
	for _, b := range binds {
		if err := os.MkdirAll(b.Host, 0o777); err != nil {
			return nil, nil, http.StatusInternalServerError, "Failed to mount the volume"
		}
	}
	for _, b := range binds {
		if err := os.MkdirAll(b.Host, 0o777); err != nil {
			return nil, nil, http.StatusInternalServerError, "Failed to mount the volume"
		}
	}
	for _, m := range resolved {
		for _, v := range live {
			if v.id == m.VolumeID {
				v.lastUsed = time.Now().UTC()
			}
		}
	}
	return resolved, binds, 0, ""
}

// mountPathErrors is the control plane's refusal of mount paths, each
// path's fault joined, or "".
func mountPathErrors(mounts []mount) string {
	var errs []string
	system := []string{"/proc", "/sys", "/dev", "/boot", "/etc", "/bin", "/sbin", "/lib", "/lib64"}
	for _, m := range mounts {
		p := m.MountPath
		switch {
		case !strings.HasPrefix(p, "/"):
			errs = append(errs, fmt.Sprintf("Invalid mount path %s (must be absolute)", p))
		case p == "/" || p == "//":
			errs = append(errs, fmt.Sprintf("Invalid mount path %s (cannot mount to the root directory)", p))
		case strings.Contains(p, "/../") || strings.Contains(p, "/./") || strings.HasSuffix(p, "/..") || strings.HasSuffix(p, "/."):
			errs = append(errs, fmt.Sprintf("Invalid mount path %s (cannot contain relative path components)", p))
		case strings.Contains(p[1:], "//"):
			errs = append(errs, fmt.Sprintf("Invalid mount path %s (cannot contain consecutive slashes)", p))
		case slices.ContainsFunc(system, func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") }):
			errs = append(errs, fmt.Sprintf("Invalid mount path %s (cannot mount to system directory)", p))
		}
	}
	return strings.Join(errs, ", ")
}

// subpathErrors is the control plane's refusal of subpaths (S3 key
// prefixes), or "".
func subpathErrors(mounts []mount) string {
	var errs []string
	for _, m := range mounts {
		switch s := m.Subpath; {
		case s == "":
		case strings.HasPrefix(s, "/"):
			errs = append(errs, fmt.Sprintf(`Invalid subpath "%s" (S3 key prefixes cannot start with /)`, s))
		case strings.Contains(s, ".."):
			errs = append(errs, fmt.Sprintf(`Invalid subpath "%s" (cannot contain .. for security)`, s))
		case strings.Contains(s, "//"):
			errs = append(errs, fmt.Sprintf(`Invalid subpath "%s" (cannot contain consecutive slashes)`, s))
		}
	}
	return strings.Join(errs, ", ")
}
