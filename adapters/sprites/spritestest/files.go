package spritestest

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
)

// fsTarget resolves the path and workingDir parameters to a sprite path.
func fsTarget(r *http.Request) (string, bool) {
	p := r.URL.Query().Get("path")
	if p == "" {
		return "", false
	}
	if !path.IsAbs(p) {
		wd := r.URL.Query().Get("workingDir")
		if wd == "" {
			wd = "/home/sprite"
		}
		p = path.Join(wd, p)
	}
	return path.Clean(p), true
}

// writeFile is PUT /v1/sprites/{name}/fs/write?path=&workingDir=&mode=&
// mkdirParents= (or mkdir=): the raw body becomes the file.
func (s *Server) writeFile(w http.ResponseWriter, r *http.Request, _ []byte) {
	p, ok := fsTarget(r)
	if !ok {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "path is required"})
		return
	}
	mode := fs.FileMode(0o644)
	if m := r.URL.Query().Get("mode"); m != "" {
		n, err := strconv.ParseUint(m, 8, 32)
		if err != nil || n > 0o7777 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid mode", "path": p})
			return
		}
		mode = fs.FileMode(n)
	}
	q := r.URL.Query()
	parents := q.Get("mkdirParents") == "true" || q.Get("mkdir") == "true"
	sp, ok := s.touched(w, r)
	if !ok {
		return
	}
	target := sp.hostPath(p)
	if parents {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error(), "code": "EIO", "path": p})
			return
		}
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode.Perm())
	if errors.Is(err, fs.ErrNotExist) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "parent directory does not exist", "code": "ENOENT", "path": p})
		return
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "cannot write", "code": "EIO", "path": p})
		return
	}
	n, err := io.Copy(f, r.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "write interrupted", "code": "EIO", "path": p})
		return
	}
	_ = os.Chmod(target, mode.Perm())
	writeJSON(w, http.StatusOK, map[string]any{"path": p, "size": n, "mode": "0" + strconv.FormatUint(uint64(mode.Perm()), 8)})
}

// readFile is GET /v1/sprites/{name}/fs/read?path=&workingDir=.
func (s *Server) readFile(w http.ResponseWriter, r *http.Request, _ []byte) {
	p, sp, ok := s.fsRequest(w, r)
	if !ok {
		return
	}
	f, err := os.Open(sp.hostPath(p))
	if err != nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "file not found", "code": "ENOENT", "path": p})
		return
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || info.IsDir() {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "is a directory", "code": "EISDIR", "path": p})
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, f)
}

// fsRequest is a filesystem request's path and sprite (activity
// recorded), or false once it has answered: 400 without a path, 404 for an
// unknown sprite.
func (s *Server) fsRequest(w http.ResponseWriter, r *http.Request) (string, *sprite, bool) {
	p, ok := fsTarget(r)
	if !ok {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "path is required"})
		return "", nil, false
	}
	sp, ok := s.touched(w, r)
	return p, sp, ok
}

// touched finds the request's sprite and records activity on it, or
// answers 404.
func (s *Server) touched(w http.ResponseWriter, r *http.Request) (*sprite, bool) {
	sp, ok := s.lock(w, r)
	if ok {
		sp.touch()
		s.mu.Unlock()
	}
	return sp, ok
}

// File returns a file's bytes in the named sprite, or false.
func (s *Server) File(name, p string) ([]byte, bool) {
	s.mu.Lock()
	sp := s.sprites[name]
	s.mu.Unlock()
	if sp == nil {
		return nil, false
	}
	b, err := os.ReadFile(sp.hostPath(p))
	return b, err == nil
}

// policyRule is one egress rule as Sprites takes it.
type policyRule struct {
	Domain  *string `json:"domain,omitempty"`
	Action  *string `json:"action,omitempty"`
	Include *string `json:"include,omitempty"`
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
