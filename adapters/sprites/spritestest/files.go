package spritestest

import (
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
)

// fsTarget resolves the path and workingDir parameters to a sprite path.
func fsTarget(r *http.Request) (string, bool) {
	p := r.URL.Query().Get("path")
	if p == "" {
		return "", false
	}
	return spritePath(p, r.URL.Query().Get("workingDir")), true
}

// spritePath is the sprite path p names from working directory wd (the
// sprite user's home when empty).
func spritePath(p, wd string) string {
	if !path.IsAbs(p) {
		p = path.Join(cmp.Or(wd, "/home/sprite"), p)
	}
	return path.Clean(p)
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
	target, err := sp.hostPath(p)
	if err != nil {
		fsFailure(w, p, err)
		return
	}
	if parents {
		if err := sp.space.MkdirAll(path.Dir(path.Clean("/"+p)), 0o755, spriteUser); err != nil {
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
	_ = stubfs.Chown(target, spriteUser)
	writeJSON(w, http.StatusOK, map[string]any{"path": p, "size": n, "mode": "0" + strconv.FormatUint(uint64(mode.Perm()), 8)})
}

// readFile is GET /v1/sprites/{name}/fs/read?path=&workingDir=.
func (s *Server) readFile(w http.ResponseWriter, r *http.Request, _ []byte) {
	p, sp, ok := s.fsRequest(w, r)
	if !ok {
		return
	}
	host, err := sp.hostPath(p)
	if err != nil {
		fsFailure(w, p, err)
		return
	}
	f, err := os.Open(host)
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
	host, err := sp.hostPath(p)
	if err != nil {
		return nil, false
	}
	b, err := os.ReadFile(host)
	return b, err == nil
}

// The filesystem routes beyond read and write, as Sprites' Go client uses
// them: list (which also stats a single file), delete, rename, copy and
// chmod. Failures answer {"error", "code", "path"} with 404 for absence
// and 400 otherwise. Links are never followed: an entry is described
// itself, and a rename or delete acts on the link.

// fsEntry is one file as the list answers it.
type fsEntry struct {
	Name    string    `json:"name"`
	Path    string    `json:"path"`
	Type    string    `json:"type"` // file, directory, symlink or other
	Size    int64     `json:"size"`
	Mode    string    `json:"mode"` // octal permission bits, e.g. 0644
	ModTime time.Time `json:"modTime"`
	IsDir   bool      `json:"isDir"`
}

func entryOf(p string, info fs.FileInfo) fsEntry {
	e := fsEntry{Name: path.Base(p), Path: p, Size: info.Size(), ModTime: info.ModTime().UTC(),
		Mode: "0" + strconv.FormatUint(uint64(info.Mode().Perm()), 8), IsDir: info.IsDir()}
	switch {
	case info.Mode().IsRegular():
		e.Type = "file"
	case info.IsDir():
		e.Type = "directory"
	case info.Mode()&fs.ModeSymlink != 0:
		e.Type = "symlink"
	default:
		e.Type = "other"
	}
	return e
}

// fsFailure answers err for the sprite path p: 404 for absence, 400
// otherwise, with the errno's name as the code.
func fsFailure(w http.ResponseWriter, p string, err error) {
	code, status := fsCode(err)
	writeJSON(w, status, map[string]string{"error": code + ": " + p, "code": code, "path": p})
}

// fsCode is err's errno word and the status the fs routes answer it with.
func fsCode(err error) (string, int) {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "ENOENT", http.StatusNotFound
	case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
		return "ENOTEMPTY", http.StatusBadRequest
	case errors.Is(err, syscall.ENOTDIR):
		return "ENOTDIR", http.StatusBadRequest
	case errors.Is(err, syscall.EISDIR):
		return "EISDIR", http.StatusBadRequest
	case errors.Is(err, syscall.EINVAL):
		return "EINVAL", http.StatusBadRequest
	}
	return "EIO", http.StatusBadRequest
}

// listFiles is GET /v1/sprites/{name}/fs/list?path=&workingDir=: a
// directory's entries, or for a file the file alone.
func (s *Server) listFiles(w http.ResponseWriter, r *http.Request, _ []byte) {
	p, sp, ok := s.fsRequest(w, r)
	if !ok {
		return
	}
	host, err := sp.hostPath(p)
	if err != nil {
		fsFailure(w, p, err)
		return
	}
	info, err := os.Lstat(host)
	if err != nil {
		fsFailure(w, p, err)
		return
	}
	entries := []fsEntry{}
	if !info.IsDir() {
		entries = append(entries, entryOf(p, info))
	} else {
		names, err := os.ReadDir(host)
		if err != nil {
			fsFailure(w, p, err)
			return
		}
		for _, d := range names {
			if info, err := d.Info(); err == nil {
				entries = append(entries, entryOf(path.Join(p, d.Name()), info))
			}
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	}
	writeJSON(w, http.StatusOK, map[string]any{"path": p, "entries": entries, "count": len(entries)})
}

// deleteFile is DELETE /v1/sprites/{name}/fs/delete?path=&workingDir=&
// recursive=: a file, an empty directory, or with recursive=true a tree.
func (s *Server) deleteFile(w http.ResponseWriter, r *http.Request, _ []byte) {
	p, sp, ok := s.fsRequest(w, r)
	if !ok {
		return
	}
	host, err := sp.hostPath(p)
	if err != nil {
		fsFailure(w, p, err)
		return
	}
	if p == "/" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "refusing to delete /", "code": "EINVAL", "path": p})
		return
	}
	if _, err := os.Lstat(host); err != nil {
		fsFailure(w, p, err)
		return
	}
	if r.URL.Query().Get("recursive") == "true" {
		err = os.RemoveAll(host)
	} else {
		err = syscall.Unlink(host)
		if errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.EPERM) {
			err = syscall.Rmdir(host)
		}
	}
	if err != nil {
		fsFailure(w, p, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"path": p, "deleted": true})
}

// fsPair is the body of rename and copy.
type fsPair struct {
	Source     string `json:"source"`
	Dest       string `json:"dest"`
	WorkingDir string `json:"workingDir"`
	Recursive  bool   `json:"recursive"`
}

// pairRequest reads a rename or copy body, resolves both paths and finds
// the sprite (activity recorded), or answers 400 or 404.
func (s *Server) pairRequest(w http.ResponseWriter, r *http.Request, body []byte) (fsPair, *sprite, bool) {
	var req fsPair
	if err := json.Unmarshal(body, &req); err != nil || req.Source == "" || req.Dest == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "source and dest are required"})
		return req, nil, false
	}
	req.Source, req.Dest = spritePath(req.Source, req.WorkingDir), spritePath(req.Dest, req.WorkingDir)
	sp, ok := s.touched(w, r)
	return req, sp, ok
}

// renameFile is POST /v1/sprites/{name}/fs/rename with {source, dest,
// workingDir}: rename(2), so a file at dest is replaced.
func (s *Server) renameFile(w http.ResponseWriter, r *http.Request, body []byte) {
	req, sp, ok := s.pairRequest(w, r, body)
	if !ok {
		return
	}
	src, err := sp.hostPath(req.Source)
	if err != nil {
		fsFailure(w, req.Source, err)
		return
	}
	dst, err := sp.hostPath(req.Dest)
	if err != nil {
		fsFailure(w, req.Dest, err)
		return
	}
	if _, err := os.Lstat(src); err != nil {
		fsFailure(w, req.Source, err)
		return
	}
	if err := os.Rename(src, dst); err != nil {
		fsFailure(w, req.Dest, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"source": req.Source, "dest": req.Dest})
}

// copyFile is POST /v1/sprites/{name}/fs/copy with {source, dest,
// workingDir, recursive}: a file, or with recursive a directory tree.
func (s *Server) copyFile(w http.ResponseWriter, r *http.Request, body []byte) {
	req, sp, ok := s.pairRequest(w, r, body)
	if !ok {
		return
	}
	src, err := sp.hostPath(req.Source)
	if err != nil {
		fsFailure(w, req.Source, err)
		return
	}
	dst, err := sp.hostPath(req.Dest)
	if err != nil {
		fsFailure(w, req.Dest, err)
		return
	}
	info, err := os.Lstat(src)
	if err != nil {
		fsFailure(w, req.Source, err)
		return
	}
	if info.IsDir() && !req.Recursive {
		fsFailure(w, req.Source, syscall.EISDIR)
		return
	}
	if info.IsDir() {
		err = os.MkdirAll(filepath.Dir(dst), 0o755) // a tree copied makes its parents
	}
	if err == nil {
		err = stubfs.CopyTree(src, dst)
	}
	if err != nil {
		fsFailure(w, req.Dest, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"source": req.Source, "dest": req.Dest})
}

// chmodFile is POST /v1/sprites/{name}/fs/chmod with {path, workingDir,
// mode} (mode in octal, e.g. "0755").
func (s *Server) chmodFile(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Path       string `json:"path"`
		WorkingDir string `json:"workingDir"`
		Mode       string `json:"mode"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.Path == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "path is required"})
		return
	}
	mode, err := strconv.ParseUint(req.Mode, 8, 32)
	if err != nil || mode > 0o7777 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid mode", "code": "EINVAL", "path": req.Path})
		return
	}
	p := spritePath(req.Path, req.WorkingDir)
	sp, ok := s.touched(w, r)
	if !ok {
		return
	}
	host, err := sp.hostPath(p)
	if err != nil {
		fsFailure(w, p, err)
		return
	}
	if err := os.Chmod(host, fs.FileMode(mode)); err != nil {
		fsFailure(w, p, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"path": p, "mode": req.Mode})
}

// chownFile is POST /v1/sprites/{name}/fs/chown with {path, workingDir,
// uid, gid, recursive}: uid and gid are ids or the sprite's user and group
// names; links are changed themselves. Applied where the server runs as
// root (only root may give a file away); checked either way.
func (s *Server) chownFile(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Path       string          `json:"path"`
		WorkingDir string          `json:"workingDir"`
		UID        json.RawMessage `json:"uid"`
		GID        json.RawMessage `json:"gid"`
		Recursive  bool            `json:"recursive"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.Path == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "path is required"})
		return
	}
	p := spritePath(req.Path, req.WorkingDir)
	uid, uidOK := ownerID(req.UID)
	gid, gidOK := ownerID(req.GID)
	if !uidOK || !gidOK || (uid < 0 && gid < 0) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "uid or gid is required: an id or a name of the sprite's", "code": "EINVAL", "path": p})
		return
	}
	sp, ok := s.touched(w, r)
	if !ok {
		return
	}
	host, err := sp.hostPath(p)
	if err == nil {
		_, err = os.Lstat(host)
	}
	if err != nil {
		fsFailure(w, p, err)
		return
	}
	if os.Geteuid() == 0 {
		change := func(h string) error { return os.Lchown(h, uid, gid) }
		if req.Recursive {
			err = filepath.WalkDir(host, func(h string, _ fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				return change(h)
			})
		} else {
			err = change(host)
		}
		if err != nil {
			fsFailure(w, p, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"path": p, "uid": uid, "gid": gid})
}

// ownerID reads a chown's uid or gid: absent is -1 (unchanged), a number
// is itself, a name is the sprite's user (or its group, named alike).
func ownerID(raw json.RawMessage) (int, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return -1, true
	}
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return n, n >= 0
	}
	var name string
	if json.Unmarshal(raw, &name) != nil {
		return 0, false
	}
	if n, err := strconv.Atoi(name); err == nil {
		return n, n >= 0
	}
	for _, u := range users {
		if u.Name == name {
			return u.UID, true
		}
	}
	return 0, false
}
