package e2btest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// The volume content service: /volumecontent/{volumeID}/path, /dir and
// /file, behind a volume's content token, as E2B's published spec of it
// (the SDK's openapi-volumecontent.yml) and the orchestrator's volume
// service behind it answer. Paths are the volume's: relative ones are
// taken from its root, ".." stops there, and no symbolic link leads out.
// What is made gets the uid, gid and mode asked for, or the service's
// defaults (9090, 9090; 0777 for a directory, 0666 for a file). Errors are
// {code, message}, code the volume service's name for the fault
// (PATH_NOT_FOUND, PATH_ALREADY_EXISTS, CANNOT_DELETE_ROOT,
// DEPTH_OUT_OF_RANGE, INVALID_REQUEST) or UNKNOWN_USER_ERROR_CODE, and
// UNAUTHORIZED or FORBIDDEN for a token refused.

// The volume service's defaults and bounds.
const (
	volumeOwner    = 9090
	volumeDirMode  = 0o777
	volumeFileMode = 0o666
	maxListDepth   = 10
)

// contentError answers the content service's error body.
func contentError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]string{"code": code, "message": msg})
}

// volumeAuthorized checks a content request's bearer token: one this
// server signed, unexpired, for the volume the path names.
func (s *Server) volumeAuthorized(w http.ResponseWriter, r *http.Request) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		contentError(w, http.StatusUnauthorized, "UNAUTHORIZED", "missing bearer token")
		return false
	}
	id, err := s.tokenVolume(token)
	if err != nil {
		contentError(w, http.StatusUnauthorized, "UNAUTHORIZED", err.Error())
		return false
	}
	if id != r.PathValue("id") {
		contentError(w, http.StatusForbidden, "FORBIDDEN", "token is not valid for this volume")
		return false
	}
	return true
}

// content is one content request's volume, opened as a root, and the
// volume path it names.
type content struct {
	root *os.Root
	path string // absolute and clean, in the volume
	raw  string // the path as asked for, for messages
}

// rel is p as a name under the root.
func rel(p string) string {
	if p == "/" {
		return "."
	}
	return strings.TrimPrefix(p, "/")
}

// name is the content path as a name under the root.
func (c *content) name() string { return rel(c.path) }

// openContent reads the request's volume and path; nil once it has
// answered.
func (s *Server) openContent(w http.ResponseWriter, r *http.Request) *content {
	raw := r.URL.Query().Get("path")
	if raw == "" {
		contentError(w, http.StatusBadRequest, "INVALID_REQUEST", "query parameter 'path' is required")
		return nil
	}
	s.mu.Lock()
	v := s.volumeByID(r.PathValue("id"))
	s.mu.Unlock()
	var root *os.Root
	err := errors.New("volume not found")
	if v != nil {
		root, err = os.OpenRoot(v.dir)
	}
	if err != nil {
		contentError(w, http.StatusInternalServerError, "UNKNOWN_USER_ERROR_CODE", "failed to get chroot: "+err.Error())
		return nil
	}
	return &content{root: root, path: path.Clean("/" + raw), raw: raw}
}

// rootOps are the names os.Root gives its operations, by the names the
// volume service's (chrooted) calls give them.
var rootOps = map[string]string{"openat": "open", "mkdirat": "mkdir", "fchmodat": "chmod", "fchownat": "chown",
	"readlinkat": "readlink", "statat": "stat", "lstatat": "lstat"}

// volumeErr is err as the volume service's chrooted call would say it:
// the volume's path, the plain operation, and a link that leads out of
// the volume taken as leading to nothing there.
func volumeErr(err error) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return err
	}
	op, inner := pe.Op, pe.Err
	if plain, ok := rootOps[op]; ok {
		op = plain
	}
	if inner != nil && inner.Error() == "path escapes from parent" {
		inner = syscall.ENOENT
	}
	return &fs.PathError{Op: op, Path: path.Clean("/" + pe.Path), Err: inner}
}

// fault answers err as the volume service classifies it: what exists 409,
// what is missing 404, a file where a directory must be 400, anything
// else 500; what says what it was doing.
func fault(w http.ResponseWriter, what string, err error) {
	err = volumeErr(err)
	switch {
	case errors.Is(err, fs.ErrExist):
		contentError(w, http.StatusConflict, "PATH_ALREADY_EXISTS", what+": "+err.Error())
	case errors.Is(err, fs.ErrNotExist):
		contentError(w, http.StatusNotFound, "PATH_NOT_FOUND", what+": "+err.Error())
	case errors.Is(err, syscall.ENOTDIR):
		contentError(w, http.StatusBadRequest, "INVALID_REQUEST", what+": a component of the path is a file, but must be a directory")
	default:
		contentError(w, http.StatusInternalServerError, "UNKNOWN_USER_ERROR_CODE", what+": "+err.Error())
	}
}

// entry is a volume entry as the service describes it (lstat's view; a
// link's type and mode are its target's).
func (c *content) entry(p string, info fs.FileInfo) map[string]any {
	kind, mode := entryKind(info.Mode()), info.Mode().Perm()
	e := map[string]any{"name": path.Base(p), "path": p, "size": info.Size()}
	if info.Mode()&fs.ModeSymlink != 0 {
		target := p
		if link, err := c.root.Readlink(rel(p)); err == nil {
			if !path.IsAbs(link) {
				link = path.Join(path.Dir(p), link)
			}
			target = path.Clean(link)
		}
		e["target"] = target
		kind, mode = "unknown", 0
		if to, err := c.root.Stat(rel(p)); err == nil {
			kind, mode = entryKind(to.Mode()), to.Mode().Perm()
		}
	}
	e["type"], e["mode"] = kind, uint32(mode)
	uid, gid, _ := stubproc.Owner(info)
	atime, ctime, _ := stubproc.Times(info)
	e["uid"], e["gid"] = uid, gid
	e["atime"], e["mtime"], e["ctime"] = atime.UTC().Format(time.RFC3339Nano), info.ModTime().UTC().Format(time.RFC3339Nano), ctime.UTC().Format(time.RFC3339Nano)
	return e
}

func entryKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "unknown"
}

// answerEntry answers the entry at the content path.
func (c *content) answerEntry(w http.ResponseWriter, status int) {
	info, err := c.root.Lstat(c.name())
	if err != nil {
		fault(w, "failed to stat", err)
		return
	}
	writeJSON(w, status, c.entry(c.path, info))
}

// making is a request that makes an entry: its content, the owner and
// mode asked for (the service's defaults without), and whether it is
// forced.
type making struct {
	*content
	uid, gid int
	mode     fs.FileMode
	forced   bool
}

// openMaking reads a make's query parameters (mode defMode without one)
// and opens its content, the entry's parents made first when forced; nil
// once it has answered.
func (s *Server) openMaking(w http.ResponseWriter, r *http.Request, defMode int) *making {
	uid, ok := uintParam(w, r, "uid", volumeOwner)
	var gid, mode int
	if ok {
		gid, ok = uintParam(w, r, "gid", volumeOwner)
	}
	if ok {
		mode, ok = uintParam(w, r, "mode", defMode)
	}
	if !ok {
		return nil
	}
	c := s.openContent(w, r)
	if c == nil {
		return nil
	}
	forced, _ := strconv.ParseBool(r.URL.Query().Get("force"))
	if forced {
		if err := c.ensureDirs(path.Dir(c.path), uid, gid); err != nil {
			c.root.Close()
			fault(w, "failed to prepare parent directories", err)
			return nil
		}
	}
	return &making{content: c, uid: uid, gid: gid, mode: fs.FileMode(mode) & fs.ModePerm, forced: forced}
}

// uintParam is query parameter name as an unsigned 32-bit number, def
// without it; false once it has answered 400 for one that is not.
func uintParam(w http.ResponseWriter, r *http.Request, name string, def int) (int, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		contentError(w, http.StatusBadRequest, "INVALID_REQUEST", fmt.Sprintf("invalid %s: %q", name, v))
		return 0, false
	}
	return int(n), true
}

// ensureDirs makes dir and its missing parents (mode 0777), giving those
// it made to uid and gid, as the volume service does before a forced
// create.
func (c *content) ensureDirs(dir string, uid, gid int) error {
	var made []string
	for cur := dir; ; cur = path.Dir(cur) {
		if _, err := c.root.Stat(rel(cur)); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		made = append(made, cur)
		if cur == "/" {
			break
		}
	}
	if len(made) == 0 {
		return nil
	}
	if err := c.root.MkdirAll(rel(dir), volumeDirMode); err != nil {
		return err
	}
	for i := len(made) - 1; i >= 0; i-- {
		if err := c.root.Chmod(rel(made[i]), volumeDirMode); err != nil {
			return err
		}
		if err := c.chown(made[i], uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// chown gives p to uid and gid; where this server may not (it is not
// root), what it made stays its own.
func (c *content) chown(p string, uid, gid int) error {
	err := c.root.Chown(rel(p), uid, gid)
	if errors.Is(err, fs.ErrPermission) && os.Geteuid() != 0 {
		return nil
	}
	return err
}

// statPath is GET /volumecontent/{id}/path?path=.
func (s *Server) statPath(w http.ResponseWriter, r *http.Request, _ []byte) {
	c := s.openContent(w, r)
	if c == nil {
		return
	}
	defer c.root.Close()
	info, err := c.root.Lstat(c.name())
	switch err = volumeErr(err); {
	case errors.Is(err, fs.ErrNotExist):
		contentError(w, http.StatusNotFound, "PATH_NOT_FOUND", fmt.Sprintf("failed to stat: %q not found.", c.raw))
	case err != nil:
		fault(w, "failed to stat path", err)
	default:
		writeJSON(w, http.StatusOK, c.entry(c.path, info))
	}
}

// updatePath is PATCH /volumecontent/{id}/path?path= {uid, gid, mode}:
// the mode first, then the owner (an absent one kept), answered with the
// entry.
func (s *Server) updatePath(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		UID  *uint32 `json:"uid"`
		GID  *uint32 `json:"gid"`
		Mode *uint32 `json:"mode"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		contentError(w, http.StatusBadRequest, "INVALID_REQUEST", "invalid metadata: "+err.Error())
		return
	}
	c := s.openContent(w, r)
	if c == nil {
		return
	}
	defer c.root.Close()
	notFound := func(what string) {
		contentError(w, http.StatusNotFound, "PATH_NOT_FOUND", fmt.Sprintf("failed to %s: %q not found.", what, c.raw))
	}
	if req.Mode != nil {
		if err := c.root.Chmod(c.name(), fs.FileMode(*req.Mode)&fs.ModePerm); errors.Is(err, fs.ErrNotExist) {
			notFound("chmod")
			return
		} else if err != nil {
			fault(w, "failed to update file mode", err)
			return
		}
	}
	if req.UID != nil || req.GID != nil {
		uid, gid := -1, -1
		if req.UID != nil {
			uid = int(*req.UID)
		}
		if req.GID != nil {
			gid = int(*req.GID)
		}
		if err := c.chown(c.path, uid, gid); errors.Is(err, fs.ErrNotExist) {
			notFound("chown")
			return
		} else if err != nil {
			fault(w, "failed to update file ownership", err)
			return
		}
	}
	info, err := c.root.Stat(c.name())
	if errors.Is(err, fs.ErrNotExist) {
		notFound("stat")
		return
	}
	if err != nil {
		fault(w, "failed to stat file", err)
		return
	}
	writeJSON(w, http.StatusOK, c.entry(c.path, info))
}

// deletePath is DELETE /volumecontent/{id}/path?path=: the entry and all
// under it, 204; never the root.
func (s *Server) deletePath(w http.ResponseWriter, r *http.Request, _ []byte) {
	c := s.openContent(w, r)
	if c == nil {
		return
	}
	defer c.root.Close()
	if c.path == "/" {
		contentError(w, http.StatusBadRequest, "CANNOT_DELETE_ROOT", "cannot delete root")
		return
	}
	if _, err := c.root.Lstat(c.name()); errors.Is(err, fs.ErrNotExist) {
		contentError(w, http.StatusNotFound, "PATH_NOT_FOUND", fmt.Sprintf("failed to delete: %q not found.", c.raw))
		return
	} else if err != nil {
		fault(w, "failed to stat path", err)
		return
	}
	if err := c.root.RemoveAll(c.name()); err != nil {
		fault(w, "failed to delete path", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listDir is GET /volumecontent/{id}/dir?path=&depth=: the entries under
// the directory by name, each directory's own after it, depth levels
// deep (1 to 10; 0 is 1).
func (s *Server) listDir(w http.ResponseWriter, r *http.Request, _ []byte) {
	depth, ok := uintParam(w, r, "depth", 1)
	if !ok {
		return
	}
	c := s.openContent(w, r)
	if c == nil {
		return
	}
	defer c.root.Close()
	depth = max(depth, 1)
	if depth > maxListDepth {
		contentError(w, http.StatusBadRequest, "DEPTH_OUT_OF_RANGE", fmt.Sprintf("depth must be between 1 and %d", maxListDepth))
		return
	}
	all, err := c.list(c.path, depth)
	if errors.Is(err, fs.ErrNotExist) {
		contentError(w, http.StatusNotFound, "PATH_NOT_FOUND", fmt.Sprintf("failed to read: %q not found.", c.raw))
		return
	}
	if err != nil {
		fault(w, fmt.Sprintf("failed to read directory %q", c.path), err)
		return
	}
	writeJSON(w, http.StatusOK, all)
}

// list is dir's entries, depth levels deep; a directory gone meanwhile
// is left out.
func (c *content) list(dir string, depth int) ([]map[string]any, error) {
	f, err := c.root.Open(rel(dir))
	if err != nil {
		return nil, err
	}
	entries, err := f.ReadDir(-1)
	_ = f.Close()
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	all := []map[string]any{}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue
		}
		p := path.Join(dir, e.Name())
		all = append(all, c.entry(p, info))
		if e.IsDir() && depth > 1 {
			under, err := c.list(p, depth-1)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			all = append(all, under...)
		}
	}
	return all, nil
}

// makeDir is POST /volumecontent/{id}/dir?path=&uid=&gid=&mode=&force=:
// 201 with the directory; force makes its parents too and takes one that
// exists as it is.
func (s *Server) makeDir(w http.ResponseWriter, r *http.Request, _ []byte) {
	m := s.openMaking(w, r, volumeDirMode)
	if m == nil {
		return
	}
	defer m.root.Close()
	err := m.root.Mkdir(m.name(), m.mode)
	made := err == nil
	if err != nil {
		info, statErr := m.root.Stat(m.name())
		if !m.forced || !errors.Is(err, fs.ErrExist) || statErr != nil || !info.IsDir() {
			fault(w, "failed to create directory", err)
			return
		}
	}
	if made {
		if err := m.chown(m.path, m.uid, m.gid); err != nil {
			fault(w, "failed to chown directory", err)
			return
		}
		if err := m.root.Chmod(m.name(), m.mode); err != nil {
			fault(w, "failed to chmod directory", err)
			return
		}
	}
	m.answerEntry(w, http.StatusCreated)
}

// readFile is GET /volumecontent/{id}/file?path=: the file's bytes.
func (s *Server) readFile(w http.ResponseWriter, r *http.Request, _ []byte) {
	c := s.openContent(w, r)
	if c == nil {
		return
	}
	defer c.root.Close()
	f, err := c.root.Open(c.name())
	if err != nil {
		fault(w, "failed to open file", err)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		fault(w, "failed to stat file", err)
		return
	}
	if info.IsDir() {
		fault(w, "failed to read file", volumeErr(&fs.PathError{Op: "read", Path: c.name(), Err: syscall.EISDIR}))
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(info.Size(), 10))
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, f)
}

// writeFile is PUT /volumecontent/{id}/file?path=&uid=&gid=&mode=&force=
// with the bytes as its body: 201 with the file. Without force an
// existing file is 409 and a missing parent 404; force makes the parents
// and replaces the file.
func (s *Server) writeFile(w http.ResponseWriter, r *http.Request, _ []byte) {
	m := s.openMaking(w, r, volumeFileMode)
	if m == nil {
		return
	}
	defer m.root.Close()
	flags := os.O_CREATE | os.O_WRONLY | os.O_EXCL
	if m.forced {
		flags = os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	}
	f, err := m.root.OpenFile(m.name(), flags, m.mode)
	if err != nil {
		fault(w, "failed to open file for create", err)
		return
	}
	_, err = io.Copy(f, r.Body)
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = m.chown(m.path, m.uid, m.gid)
	}
	if err == nil {
		err = m.root.Chmod(m.name(), m.mode)
	}
	if err != nil {
		fault(w, "failed to write file content", err)
		return
	}
	m.answerEntry(w, http.StatusCreated)
}
