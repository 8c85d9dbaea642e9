package daytonatest

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// The toolbox's file routes beyond upload and download, as the daemon
// answers them: files are described with os.Stat (a link by what it
// leads to), failures are empty bodies with 404 for absence, 403 for a
// permission refusal and 400 otherwise.

// fileInfo is the daemon's description of one file.
type fileInfo struct {
	Name        string `json:"name"`
	Size        int64  `json:"size"`
	Mode        string `json:"mode"` // as Go prints a mode: -rw-r--r--, drwxr-xr-x
	ModTime     string `json:"modTime"`
	ModifiedAt  string `json:"modifiedAt"`
	IsDir       bool   `json:"isDir"`
	Owner       string `json:"owner"`
	Group       string `json:"group"`
	Permissions string `json:"permissions"` // octal, four digits
}

func describe(host string) (fileInfo, error) {
	info, err := os.Stat(host)
	if err != nil {
		return fileInfo{}, err
	}
	uid, gid := "0", "0"
	if u, g, ok := stubproc.Owner(info); ok {
		uid, gid = strconv.Itoa(u), strconv.Itoa(g)
	}
	mod := info.ModTime().Format(time.RFC3339Nano)
	return fileInfo{Name: info.Name(), Size: info.Size(), Mode: info.Mode().String(), ModTime: mod, ModifiedAt: mod,
		IsDir: info.IsDir(), Owner: uid, Group: gid, Permissions: fmt.Sprintf("%04o", info.Mode().Perm())}, nil
}

// failWith answers err as the daemon does, with no body.
func failWith(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		w.WriteHeader(http.StatusNotFound)
	case errors.Is(err, fs.ErrPermission):
		w.WriteHeader(http.StatusForbidden)
	default:
		w.WriteHeader(http.StatusBadRequest)
	}
}

// pathOf is where this machine reaches the required path parameter name
// of the request's sandbox; without one it answers 400.
func pathOf(w http.ResponseWriter, r *http.Request, name string) (string, bool) {
	p := r.URL.Query().Get(name)
	if p == "" {
		w.WriteHeader(http.StatusBadRequest)
		return "", false
	}
	host, err := sandboxOf(r).resolve(p)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return "", false
	}
	return host, true
}

// listFiles is GET /files?path=: the directory's entries (an array, empty
// for an empty directory); a file is 400.
func (s *Server) listFiles(w http.ResponseWriter, r *http.Request) {
	sb := sandboxOf(r)
	p := r.URL.Query().Get("path")
	p = cmp.Or(p, home)
	host, err := sb.resolve(p)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	entries, err := os.ReadDir(host)
	if err != nil {
		failWith(w, err)
		return
	}
	out := make([]fileInfo, 0, len(entries))
	for _, e := range entries {
		if info, err := describe(filepath.Join(host, e.Name())); err == nil {
			out = append(out, info)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// fileInfo is GET /files/info?path=.
func (s *Server) fileInfo(w http.ResponseWriter, r *http.Request) {
	target, ok := pathOf(w, r, "path")
	if !ok {
		return
	}
	info, err := describe(target)
	if err != nil {
		failWith(w, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

// createFolder is POST /files/folder?path=&mode=: the directory and its
// parents (the mode under the daemon's umask, 022); an existing directory
// is fine, 201 either way.
func (s *Server) createFolder(w http.ResponseWriter, r *http.Request) {
	target, ok := pathOf(w, r, "path")
	if !ok {
		return
	}
	sb := sandboxOf(r)
	perm := fs.FileMode(0o755)
	if m := r.URL.Query().Get("mode"); m != "" {
		n, err := strconv.ParseUint(m, 8, 32)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		perm = fs.FileMode(n)
	}
	existed := false
	if info, err := os.Stat(target); err == nil && info.IsDir() {
		existed = true
	}
	if err := sb.space.MkdirAll(inside(r.URL.Query().Get("path")), perm, daytona); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if !existed {
		_ = os.Chmod(target, perm&^0o022) // MkdirAll's mode as the daemon's umask leaves it
	}
	w.WriteHeader(http.StatusCreated)
}

// moveFile is POST /files/move?source=&destination=: 404 for a missing
// source or destination parent, 409 when the destination exists.
func (s *Server) moveFile(w http.ResponseWriter, r *http.Request) {
	src, ok := pathOf(w, r, "source")
	if !ok {
		return
	}
	dst, ok := pathOf(w, r, "destination")
	if !ok {
		return
	}
	if _, err := os.Stat(src); err != nil {
		failWith(w, err)
		return
	}
	if _, err := os.Stat(filepath.Dir(dst)); err != nil {
		failWith(w, err)
		return
	}
	if _, err := os.Stat(dst); err == nil {
		w.WriteHeader(http.StatusConflict)
		return
	}
	if err := os.Rename(src, dst); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// setPermissions is POST /files/permissions?path=&mode= (octal).
func (s *Server) setPermissions(w http.ResponseWriter, r *http.Request) {
	target, ok := pathOf(w, r, "path")
	if !ok {
		return
	}
	if _, err := os.Stat(target); err != nil {
		failWith(w, err)
		return
	}
	if m := r.URL.Query().Get("mode"); m != "" {
		n, err := strconv.ParseUint(m, 8, 32)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if err := os.Chmod(target, fs.FileMode(n)); err != nil {
			failWith(w, err)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}

// deleteFile is DELETE /files?path=&recursive=: 204; a directory, even an
// empty one, needs recursive=true (400 without).
func (s *Server) deleteFile(w http.ResponseWriter, r *http.Request) {
	target, ok := pathOf(w, r, "path")
	if !ok {
		return
	}
	info, err := os.Stat(target)
	if err != nil {
		failWith(w, err)
		return
	}
	recursive := r.URL.Query().Get("recursive") == "true"
	if info.IsDir() && !recursive {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if recursive {
		err = os.RemoveAll(target)
	} else {
		err = os.Remove(target)
	}
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
