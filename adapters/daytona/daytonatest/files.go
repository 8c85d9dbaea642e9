package daytonatest

import (
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
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
		target := sb.resolve(p)
		if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_, err = io.Copy(f, part)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
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
	f, err := os.Open(sb.resolve(p))
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
