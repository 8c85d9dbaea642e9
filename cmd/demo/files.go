package main

import (
	"errors"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"

	"github.com/paddockhq/paddock"
)

// The file panel's routes: a directory's listing, a file's download and
// upload (streamed both ways, never held whole), and delete, for the
// sandbox the query names (provider, name) at the query's path.

// maxUpload bounds one upload through the console.
const maxUpload = 256 << 20

// filePath is the request's path parameter ("/" when absent).
func filePath(r *http.Request) string {
	if p := r.URL.Query().Get("path"); p != "" {
		return p
	}
	return "/"
}

func (c *console) listFiles(w http.ResponseWriter, r *http.Request) {
	a, h := c.sandbox(r)
	entries, err := a.ListDir(r.Context(), h, filePath(r))
	if entries == nil {
		entries = []paddock.FileInfo{}
	}
	writeJSON(w, entries, err)
}

func (c *console) downloadFile(w http.ResponseWriter, r *http.Request) {
	p := filePath(r)
	a, h := c.sandbox(r)
	rc, err := a.ReadFile(r.Context(), h, p)
	if err != nil {
		writeJSON(w, nil, err)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(p)}))
	_, _ = io.Copy(w, rc) // a failure midway cuts the download short, which the browser reports
}

func (c *console) uploadFile(w http.ResponseWriter, r *http.Request) {
	mode := fs.FileMode(0o644)
	if m := r.URL.Query().Get("mode"); m != "" {
		n, err := strconv.ParseUint(m, 8, 32)
		if err != nil || n > 0o777 {
			writeJSON(w, nil, &paddock.InvalidError{Detail: paddock.DetailPath + ": mode must be octal permission bits"})
			return
		}
		mode = fs.FileMode(n)
	}
	body := http.MaxBytesReader(w, r.Body, maxUpload)
	a, h := c.sandbox(r)
	err := a.WriteFile(r.Context(), h, filePath(r), mode, body)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		err = &paddock.InvalidError{Detail: "the console takes uploads of at most 256 MiB"}
	}
	writeJSON(w, map[string]bool{"ok": true}, err)
}

func (c *console) deleteFile(w http.ResponseWriter, r *http.Request) {
	opts := paddock.RemoveOpts{Recursive: r.URL.Query().Get("recursive") == "true"}
	a, h := c.sandbox(r)
	writeJSON(w, map[string]bool{"ok": true}, a.Remove(r.Context(), h, filePath(r), opts))
}
