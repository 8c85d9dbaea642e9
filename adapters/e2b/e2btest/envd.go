package e2btest

import (
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/paddockhq/paddock/adapters/e2b/envd/filesystempb/filesystempbconnect"
	"github.com/paddockhq/paddock/adapters/e2b/envd/processpb/processpbconnect"
	"github.com/paddockhq/paddock/adapters/internal/stubfs"
)

// envdTarget is the sandbox an envd request names (the routing header, or
// a 49983-<id> host), or "".
func envdTarget(r *http.Request) string {
	if id := r.Header.Get("E2b-Sandbox-Id"); id != "" {
		return id
	}
	host, _, _ := strings.Cut(r.Host, ".")
	if port, id, ok := strings.Cut(host, "-"); ok && port == "49983" {
		return id
	}
	return ""
}

// envdHandler serves every sandbox's envd; the sandbox comes with the
// request's context.
func (s *Server) envdHandler() http.Handler {
	mux := http.NewServeMux()
	path, h := processpbconnect.NewProcessHandler(processService{s: s})
	mux.Handle(path, h)
	path, h = filesystempbconnect.NewFilesystemHandler(fsService{s: s})
	mux.Handle(path, h)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /files", s.download)
	mux.HandleFunc("POST /files", s.upload)
	return mux
}

// envd routes one envd request: a sandbox that is gone or paused answers
// as E2B's proxy does (502 JSON); an unknown Basic-auth user is refused
// as envd refuses it.
func (s *Server) envd(w http.ResponseWriter, r *http.Request, id string) {
	body, r := peekBody(r)
	route := "ENVD " + r.URL.Path
	s.Record(route, r, body)
	s.mu.Lock()
	sb := s.sandboxes[id]
	running := sb != nil && sb.state == "running"
	s.mu.Unlock()
	if !running {
		writeJSON(w, http.StatusBadGateway, map[string]any{"sandboxId": id, "message": "The sandbox was not found", "code": 502})
		return
	}
	if s.Fault(route, -1, w, r) {
		return
	}
	if sb.token != "" && r.URL.Path == "/files" {
		if msg := sb.filesAccess(r); msg != "" {
			filesError(w, http.StatusUnauthorized, msg)
			return
		}
	} else if sb.token != "" && r.Header.Get("X-Access-Token") != sb.token {
		// Even on a stream: HTTP 401 with envd's JSON, as envd answers it.
		writeJSON(w, http.StatusUnauthorized, map[string]any{"code": 401,
			"message": "unauthorized access, please provide a valid access token or method signing if supported"})
		return
	}
	if user, ok := basicUser(r); ok && !knownUser(user) && r.URL.Path != "/files" { // /files goes by its username parameter
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/connect+") {
			// A stream: HTTP 200 and an end-of-stream error, as envd answers.
			w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
			w.WriteHeader(http.StatusOK)
			msg := `{"error":{"code":"unauthenticated","message":"invalid username: '` + user + `'"}}`
			_, _ = w.Write(append([]byte{2, 0, 0, 0, byte(len(msg))}, msg...))
			return
		}
		writeJSON(w, http.StatusUnauthorized, map[string]string{"code": "unauthenticated", "message": "invalid username: '" + user + "'"})
		return
	}
	s.envdMux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sandboxKey{}, sb)))
}

// peekBody reads a small request body for the log and puts it back; a
// large or streamed body (an upload) is logged empty and left alone.
func peekBody(r *http.Request) ([]byte, *http.Request) {
	if r.ContentLength < 0 || r.ContentLength > 1<<20 || strings.HasPrefix(r.URL.Path, "/files") {
		return nil, r
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	return body, r
}

// users are the users of E2B's templates: root, and user, the default.
var users = []stubfs.User{{Name: "root", Home: "/root"}, {Name: "user", UID: 1000, GID: 1000, Home: "/home/user"}}

// userNamed is the sandbox's user of that name; false for one it lacks.
func userNamed(name string) (stubfs.User, bool) {
	for _, u := range users {
		if u.Name == name {
			return u, true
		}
	}
	return stubfs.User{}, false
}

// knownUser reports a user the sandbox has.
func knownUser(name string) bool { _, ok := userNamed(name); return ok }

// userOf is the user an RPC acts as: its Basic-auth user (refused before
// when unknown), by default user.
func userOf(h http.Header) stubfs.User {
	name, _, ok := (&http.Request{Header: h}).BasicAuth()
	u, known := userNamed(name)
	if !ok || !known {
		u, _ = userNamed("user")
	}
	return u
}

// basicUser is the user a Basic Authorization header names.
func basicUser(r *http.Request) (string, bool) {
	user, _, ok := r.BasicAuth()
	return user, ok
}

// filesUser is the user a /files call acts as: its username parameter
// (the Basic-auth user does not count there), by default user; an unknown
// one is refused with envd's 401.
func filesUser(w http.ResponseWriter, r *http.Request) (stubfs.User, bool) {
	name := r.URL.Query().Get("username")
	name = cmp.Or(name, "user")
	u, ok := userNamed(name)
	if !ok {
		filesError(w, http.StatusUnauthorized, "invalid username: '"+name+"'")
	}
	return u, ok
}

// filesAccess checks a /files call of a secure sandbox as envd does: the
// access token in X-Access-Token, or else a signature of the call in the
// query (v1_ and unpadded base64 of SHA-256 over
// "<path>:<read|write>:<username>:<token>[:<expiration>]"), unexpired by
// the server's clock; "" when allowed, else envd's message.
func (sb *sandbox) filesAccess(r *http.Request) string {
	if h := r.Header.Get("X-Access-Token"); h != "" {
		if h == sb.token {
			return ""
		}
		return "access token present in header but does not match"
	}
	q := r.URL.Query()
	sig := q.Get("signature")
	if sig == "" {
		return "missing signature query parameter"
	}
	op := "read"
	if r.Method == http.MethodPost {
		op = "write"
	}
	raw := q.Get("path") + ":" + op + ":" + q.Get("username") + ":" + sb.token
	exp := q.Get("signature_expiration")
	if exp != "" {
		raw += ":" + exp
	}
	sum := sha256.Sum256([]byte(raw))
	if subtle.ConstantTimeCompare([]byte(sig), []byte("v1_"+base64.RawStdEncoding.EncodeToString(sum[:]))) != 1 {
		return "invalid signature"
	}
	if exp != "" {
		at, err := strconv.ParseInt(exp, 10, 64)
		sb.s.mu.Lock()
		now := sb.s.now
		sb.s.mu.Unlock()
		if err != nil || now.Unix() > at {
			return "signature is already expired"
		}
	}
	return ""
}

// filesError answers envd's own error shape for /files.
func filesError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"code": status, "message": msg})
	_, _ = w.Write(append(b, '\n'))
}

// sandboxFor is the sandbox of an envd request.
func sandboxFor(r *http.Request) *sandbox { return sandboxOf(r.Context()) }

// download is GET /files?path=: the file's bytes, streamed.
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	sb := sandboxFor(r)
	user, ok := filesUser(w, r)
	if !ok {
		return
	}
	abs := sb.inside(r.URL.Query().Get("path"), user)
	target, err := sb.space.Path(abs)
	if err != nil {
		filesError(w, http.StatusInternalServerError, "error checking path: "+err.Error())
		return
	}
	info, err := os.Stat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		filesError(w, http.StatusNotFound, "path '"+abs+"' does not exist")
		return
	case err != nil:
		filesError(w, http.StatusInternalServerError, "error checking path: "+err.Error())
		return
	case info.IsDir():
		filesError(w, http.StatusBadRequest, "path '"+abs+"' is a directory")
		return
	}
	w.Header().Set("Content-Disposition", "inline; filename="+filepath.Base(abs))
	http.ServeFile(w, r, target)
}

// upload is POST /files?path=: a multipart part named file (or a raw
// octet-stream body), written with its parents created, streamed to disk.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	sb := sandboxFor(r)
	p := r.URL.Query().Get("path")
	owner, ok := filesUser(w, r)
	if !ok {
		return
	}
	metadata := metadataHeaders(r.Header)
	if err := validateMetadata(metadata); err != nil {
		filesError(w, http.StatusBadRequest, "invalid metadata: "+err.Error())
		return
	}
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var written []map[string]any
	write := func(name string, body io.Reader) bool {
		abs := sb.inside(name, owner)
		target, err := sb.space.Path(abs)
		if err != nil {
			filesError(w, http.StatusInternalServerError, "error resolving path: "+err.Error())
			return false
		}
		if info, err := os.Stat(target); err == nil && info.IsDir() {
			filesError(w, http.StatusBadRequest, "path is a directory: "+abs)
			return false
		}
		if err := sb.space.MkdirAll(path.Dir(abs), 0o755, owner); err != nil {
			filesError(w, http.StatusInternalServerError, "error creating directories: "+err.Error())
			return false
		}
		f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			filesError(w, http.StatusInternalServerError, "error opening file: "+err.Error())
			return false
		}
		_ = stubfs.Chown(target, owner)
		_, err = io.Copy(f, body)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if errors.Is(err, syscall.ENOSPC) {
			filesError(w, http.StatusInsufficientStorage, "not enough disk space")
			return false
		}
		if err != nil {
			filesError(w, http.StatusInternalServerError, "error writing file: "+err.Error())
			return false
		}
		// Always written, so that a file written again keeps only the
		// metadata of its last write.
		if err := writeMetadata(target, metadata); err != nil && !noXattrs(err) {
			if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
				filesError(w, http.StatusInsufficientStorage, "not enough space for file metadata: "+err.Error())
			} else {
				filesError(w, http.StatusInternalServerError, "error writing file metadata: "+err.Error())
			}
			return false
		}
		sb.s.mu.Lock()
		sb.owners[abs] = owner.Name
		sb.s.mu.Unlock()
		entry := map[string]any{"name": filepath.Base(abs), "path": abs, "type": "file"}
		if kept := readMetadata(target); len(kept) > 0 { // what the file holds, not what was asked
			entry["metadata"] = kept
		}
		written = append(written, entry)
		return true
	}
	switch ct {
	case "multipart/form-data":
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				filesError(w, http.StatusBadRequest, "error parsing multipart: "+err.Error())
				return
			}
			if part.FormName() != "file" {
				continue
			}
			name := p
			if name == "" {
				// The part's filename as sent: the SDK puts the full path
				// there (Go's FileName would keep only its base).
				_, disp, _ := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
				name = disp["filename"]
			}
			if !write(name, part) {
				return
			}
		}
	case "application/octet-stream":
		if p == "" {
			filesError(w, http.StatusBadRequest, "path query parameter is required for raw body upload")
			return
		}
		body := io.Reader(r.Body)
		if r.Header.Get("Content-Encoding") == "gzip" { // envd stores what was compressed, uncompressed
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				filesError(w, http.StatusBadRequest, "error decompressing the body: "+err.Error())
				return
			}
			defer zr.Close()
			body = zr
		}
		if !write(p, body) {
			return
		}
	default:
		filesError(w, http.StatusBadRequest, "unsupported content type: "+ct)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8") // as envd labels it
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(written)
}

// killAll kills every process of the sandbox (it was killed) and lets
// its mount namespace go.
func (sb *sandbox) killAll() {
	sb.procs.signalAll(syscall.SIGKILL)
	sb.procs.cutStreams()
	sb.space.Retire()
}
