package e2btest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/paddockhq/paddock/adapters/internal/stubfs"
)

// Volumes, as E2B's API serves them: a volume is made, listed, read and
// deleted on the control plane, each answer but the listing carrying a
// token for its content, and a sandbox mounts volumes by name at absolute
// paths. Its content is served under /volumecontent/{volumeID} (content.go).

// volume is one of the team's volumes; its files are a directory here.
type volume struct {
	id, name string
	dir      string
}

// volumeType is the type a volume gets: the placeholder the API's
// configuration names, carried in its tokens.
const volumeType = "default"

// teamID is the team the server's key belongs to.
const teamID = "4d5b6a1e-0c6f-4d2a-9a57-7f0e1b2c3d4e"

// volumeTokenTTL is how long a content token lasts (the API's default).
const volumeTokenTTL = time.Hour

var volumeName = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// volumeByID is volume id, or nil (the caller holds s.mu).
func (s *Server) volumeByID(id string) *volume {
	for _, v := range s.volumes {
		if v.id == id {
			return v
		}
	}
	return nil
}

// volumeByName is the volume named name, or nil (the caller holds s.mu).
func (s *Server) volumeByName(name string) *volume {
	for _, v := range s.volumes {
		if v.name == name {
			return v
		}
	}
	return nil
}

// withToken is a volume as create and get answer it: with a content token
// and no domain (the team is on E2B's own cluster).
func (s *Server) withToken(v *volume) map[string]any {
	return map[string]any{"volumeID": v.id, "name": v.name, "token": s.volumeToken(v)}
}

// createVolume is POST /volumes {name}: 201 with the volume and its token;
// 400 for a name not of [a-zA-Z0-9_-] or one the team has.
func (s *Server) createVolume(w http.ResponseWriter, _ *http.Request, body []byte) {
	var req struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		apiError(w, http.StatusBadRequest, "Error when parsing request: "+err.Error())
		return
	}
	if !volumeName.MatchString(req.Name) {
		apiError(w, http.StatusBadRequest, "Invalid volume name")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.volumeByName(req.Name) != nil {
		apiError(w, http.StatusBadRequest, fmt.Sprintf("Volume with name '%s' already exists", req.Name))
		return
	}
	v := &volume{id: uuid.NewString(), name: req.Name}
	v.dir = filepath.Join(s.Root(), "volumes", v.id)
	if err := os.MkdirAll(v.dir, 0o700); err != nil {
		apiError(w, http.StatusInternalServerError, "Error when creating directory")
		return
	}
	s.volumes = append(s.volumes, v)
	writeJSON(w, http.StatusCreated, s.withToken(v))
}

// listVolumes is GET /volumes: every volume, id and name, oldest first.
func (s *Server) listVolumes(w http.ResponseWriter, _ *http.Request, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := []map[string]string{}
	for _, v := range s.volumes {
		all = append(all, map[string]string{"volumeID": v.id, "name": v.name})
	}
	writeJSON(w, http.StatusOK, all)
}

// volumeOf answers the routes naming a volume by id: nil once it has
// answered 400 for an id that is no UUID or 404 for none (the caller
// holds s.mu).
func (s *Server) volumeOf(w http.ResponseWriter, r *http.Request) *volume {
	id := r.PathValue("id")
	if _, err := uuid.Parse(id); err != nil {
		apiError(w, http.StatusBadRequest, "Invalid volume ID")
		return nil
	}
	v := s.volumeByID(id)
	if v == nil {
		apiError(w, http.StatusNotFound, "Volume not found")
	}
	return v
}

// getVolume is GET /volumes/{id}: the volume with a new token.
func (s *Server) getVolume(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.volumeOf(w, r); v != nil {
		writeJSON(w, http.StatusOK, s.withToken(v))
	}
}

// deleteVolume is DELETE /volumes/{id}: 204, the volume gone and its
// files with it (sandboxes that mount it keep an empty mount).
func (s *Server) deleteVolume(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.mu.Lock()
	v := s.volumeOf(w, r)
	if v != nil {
		s.volumes = removeVolume(s.volumes, v)
	}
	s.mu.Unlock()
	if v == nil {
		return
	}
	_ = os.RemoveAll(v.dir)
	w.WriteHeader(http.StatusNoContent)
}

func removeVolume(all []*volume, v *volume) []*volume {
	out := all[:0]
	for _, o := range all {
		if o != v {
			out = append(out, o)
		}
	}
	return out
}

// volumeMount is a sandbox's mount of a volume, as create takes it.
type volumeMount struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// volumeBinds checks a create's mounts as the API does (every fault
// listed by its index: a volume not found, a path empty, relative or not
// clean, a path used twice) and answers where each volume's files show.
func (s *Server) volumeBinds(mounts []volumeMount) ([]stubfs.Bind, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var faults []string
	var binds []stubfs.Bind
	used := map[string]bool{}
	for i, m := range mounts {
		reason := ""
		v := s.volumeByName(m.Name)
		switch {
		case v == nil:
			reason = fmt.Sprintf("volume '%s' not found", m.Name)
		case m.Path == "":
			reason = "path cannot be empty"
		case !filepath.IsAbs(m.Path):
			reason = "path must be absolute"
		case filepath.Clean(m.Path) != m.Path:
			reason = "path must not contain any '.' or '..' components"
		case used[m.Path]:
			reason = fmt.Sprintf("path '%s' is already used", m.Path)
		}
		if reason != "" {
			faults = append(faults, fmt.Sprintf("\t- volume mount #%d: %s", i, reason))
			continue
		}
		used[m.Path] = true
		binds = append(binds, stubfs.Bind{Host: v.dir, At: m.Path})
	}
	if len(faults) > 0 {
		return nil, "invalid mounts:\n" + strings.Join(faults, "\n")
	}
	return binds, ""
}

// volumeMounts are the sandbox's mounts as its listings show them.
func (sb *sandbox) volumeMounts() []volumeMount {
	if sb.mounts == nil {
		return []volumeMount{}
	}
	return sb.mounts
}

// volumeToken is a content token for v: a JWT the server signs (HS256),
// with the claims E2B's API puts in one.
func (s *Server) volumeToken(v *volume) string {
	now := time.Now()
	header := map[string]string{"alg": "HS256", "typ": "JWT", "kid": "e2btest", "tokid": "e2btest"}
	claims := map[string]any{"aud": "https://api.e2b.app", "exp": now.Add(volumeTokenTTL).Unix(), "iat": now.Unix(),
		"iss": "e2btest", "jti": uuid.NewString(), "nbf": now.Unix(), "sub": teamID, "teamid": teamID,
		"volid": v.id, "voltype": volumeType}
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	unsigned := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	return unsigned + "." + s.signToken(unsigned)
}

func (s *Server) signToken(unsigned string) string {
	mac := hmac.New(sha256.New, []byte(s.key))
	mac.Write([]byte(unsigned))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// tokenVolume is the volume id a content token grants, or an error for a
// token this server did not sign or that has expired.
func (s *Server) tokenVolume(token string) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || !hmac.Equal([]byte(parts[2]), []byte(s.signToken(parts[0]+"."+parts[1]))) {
		return "", errors.New("invalid token")
	}
	data, err := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Exp   int64  `json:"exp"`
		VolID string `json:"volid"`
	}
	if err == nil {
		err = json.Unmarshal(data, &claims)
	}
	if err != nil {
		return "", errors.New("invalid token")
	}
	if time.Now().Unix() >= claims.Exp {
		return "", errors.New("token has expired")
	}
	return claims.VolID, nil
}
