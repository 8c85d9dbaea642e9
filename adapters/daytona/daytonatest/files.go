package daytonatest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
)

// upload is POST /files/upload?path=: the multipart field file, written
// (parents made, 0750) over whatever was there; 200 with an empty body.
// A missing path, a missing field or a raw body is 400 with no body.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	sb := sandboxOf(r)
	p := r.URL.Query().Get("path")
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if p == "" || ct != "multipart/form-data" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if part.FormName() != "file" {
			continue
		}
		if _, err := sb.writeFile(p, part); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusOK)
		return
	}
}

// download is GET /files/download?path=: the bytes, with Range honoured;
// a missing file is 404 and a directory 400, both with no body.
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	sb := sandboxOf(r)
	p := r.URL.Query().Get("path")
	if p == "" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	host, err := sb.resolve(p)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	f, err := os.Open(host)
	if err != nil {
		if os.IsPermission(err) {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.IsDir() {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	base := filepath.Base(p)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+base+`"; filename*=utf-8''`+base)
	http.ServeContent(w, r, "", info.ModTime(), f)
}

// bulkUpload is POST /files/bulk-upload, as the official SDK uploads:
// multipart parts files[i].path (the target) and files[i].file (the
// bytes), parents made; 200 {"files":[{path,bytes}]}, or 400
// {"errors":[…],"files":null}. A file part that comes before its path is
// spooled outside the sandbox and copied into place.
func (s *Server) bulkUpload(w http.ResponseWriter, r *http.Request) {
	sb := sandboxOf(r)
	_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	mr := multipart.NewReader(r.Body, params["boundary"])
	paths := map[string]string{}   // index -> target path
	spooled := map[string]string{} // index -> spool file, waiting for its path
	sizes := map[string]int64{}
	var order []string
	var errs []string
	place := func(idx, spool string) {
		defer os.Remove(spool)
		f, err := os.Open(spool)
		if err != nil {
			errs = append(errs, err.Error())
			return
		}
		defer f.Close()
		if _, err := sb.writeFile(paths[idx], f); err != nil {
			errs = append(errs, paths[idx]+": "+err.Error())
		}
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"errors": []string{err.Error()}, "files": nil})
			return
		}
		name := part.FormName()
		idx, field, ok := bulkField(name)
		if !ok {
			continue
		}
		switch field {
		case "path":
			b, _ := io.ReadAll(io.LimitReader(part, 4096))
			paths[idx] = string(b)
			order = append(order, idx)
			if spool, ok := spooled[idx]; ok {
				place(idx, spool)
				delete(spooled, idx)
			}
		case "file":
			if p, ok := paths[idx]; ok {
				n, err := sb.writeFile(p, part)
				if err != nil {
					errs = append(errs, p+": "+err.Error())
					continue
				}
				sizes[idx] = n
				continue
			}
			f, err := os.CreateTemp(s.Root(), "upload-")
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			n, err := io.Copy(f, part)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				_ = os.Remove(f.Name())
				errs = append(errs, err.Error())
				continue
			}
			sizes[idx], spooled[idx] = n, f.Name()
		}
	}
	for _, spool := range spooled {
		_ = os.Remove(spool)
		errs = append(errs, "a file without a path")
	}
	if len(errs) > 0 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"errors": errs, "files": nil})
		return
	}
	files := []map[string]any{}
	for _, idx := range order {
		files = append(files, map[string]any{"path": paths[idx], "bytes": sizes[idx]})
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": files})
}

// writeFile writes r to sandbox path p as the daemon does, as daytona:
// parents made (0750), the file created 0644 or truncated; the bytes
// written.
func (sb *sandbox) writeFile(p string, r io.Reader) (int64, error) {
	abs := inside(p)
	// As daytona: a missing parent is made only in a directory daytona may
	// write, and the file only in one (/opt or / are root's).
	dir, made := path.Dir(abs), ""
	for {
		host, err := sb.space.Path(dir)
		if err != nil {
			return 0, err
		}
		if _, err := os.Stat(host); err == nil || dir == "/" {
			break
		}
		dir, made = path.Dir(dir), dir
	}
	if !sb.space.Writable(dir, daytona) {
		if made != "" {
			return 0, fmt.Errorf("mkdir %s: mkdir %s: permission denied", path.Dir(abs), made)
		}
		return 0, fmt.Errorf("create temp: open %s/.daytona-upload: permission denied", dir)
	}
	if err := sb.space.MkdirAll(path.Dir(abs), 0o750, daytona); err != nil {
		return 0, err
	}
	host, err := sb.space.Path(abs)
	if err != nil {
		return 0, err
	}
	f, err := os.OpenFile(host, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, err
	}
	_ = stubfs.Chown(host, daytona)
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// bulkField splits a part name files[i].path or files[i].file.
func bulkField(name string) (idx, field string, ok bool) {
	rest, found := strings.CutPrefix(name, "files[")
	if !found {
		return "", "", false
	}
	idx, field, found = strings.Cut(rest, "].")
	return idx, field, found && (field == "path" || field == "file")
}

// bulkDownload is POST /files/bulk-download {"paths":[…]}: a multipart
// answer (boundary DAYTONA-FILE-BOUNDARY), a part named file per file
// (filename = its path), a part named error holding JSON for a file that
// is missing, and HTTP 200 either way.
func (s *Server) bulkDownload(w http.ResponseWriter, r *http.Request) {
	sb := sandboxOf(r)
	var req struct {
		Paths []string `json:"paths"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		toolboxError(w, r, http.StatusBadRequest, "INVALID_REQUEST_BODY", "invalid request body")
		return
	}
	const boundary = "DAYTONA-FILE-BOUNDARY"
	w.Header().Set("Content-Type", "multipart/form-data; boundary="+boundary)
	w.WriteHeader(http.StatusOK)
	mw := multipart.NewWriter(w)
	_ = mw.SetBoundary(boundary)
	for _, p := range req.Paths {
		host, err := sb.resolve(p)
		var f *os.File
		if err == nil {
			f, err = os.Open(host)
		}
		var info os.FileInfo
		if err == nil {
			info, err = f.Stat()
		}
		if err != nil || info.IsDir() {
			if f != nil {
				f.Close()
			}
			h := textproto.MIMEHeader{"Content-Disposition": {`form-data; name="error"; filename="` + p + `"`}, "Content-Type": {"application/json"}}
			part, _ := mw.CreatePart(h)
			b, _ := json.Marshal(map[string]any{"statusCode": 404, "code": "FILE_NOT_FOUND", "message": "file not found: " + p, "path": p})
			_, _ = part.Write(b)
			continue
		}
		h := textproto.MIMEHeader{
			"Content-Disposition": {`form-data; name="file"; filename="` + p + `"; filename*=utf-8''` + url.PathEscape(p)},
			"Content-Type":        {"application/octet-stream"},
			"Content-Length":      {strconv.FormatInt(info.Size(), 10)},
		}
		part, _ := mw.CreatePart(h)
		_, _ = io.Copy(part, f)
		f.Close()
	}
	_ = mw.Close()
}
