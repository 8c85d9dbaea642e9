package main

import (
	"fmt"
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

// defaultMaxUpload bounds one upload through the console unless
// -max-upload says otherwise.
const defaultMaxUpload = 256 << 20

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
	c.writeJSON(w, entries, err)
}

func (c *console) downloadFile(w http.ResponseWriter, r *http.Request) {
	p := filePath(r)
	a, h := c.sandbox(r)
	rc, err := a.ReadFile(r.Context(), h, p)
	if err != nil {
		c.writeJSON(w, nil, err)
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
			c.writeJSON(w, nil, &paddock.InvalidError{Detail: paddock.DetailPath + ": mode must be octal permission bits"})
			return
		}
		mode = fs.FileMode(n)
	}
	tooLarge := &paddock.InvalidError{Detail: fmt.Sprintf("%s: the console takes uploads of at most %d bytes", paddock.DetailFileTooLarge, c.limits.maxUpload)}
	if r.ContentLength > c.limits.maxUpload {
		c.writeJSON(w, nil, tooLarge)
		return
	}
	a, h := c.sandbox(r)
	err := a.WriteFile(r.Context(), h, filePath(r), mode, &capped{r: r.Body, left: c.limits.maxUpload, err: tooLarge})
	c.writeJSON(w, map[string]bool{"ok": true}, err)
}

// capped is an upload's body that fails with err past its cap, so
// WriteFile, which is all or nothing, writes none of it.
type capped struct {
	r    io.Reader
	left int64
	err  error
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, c.err
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	if c.left -= int64(n); c.left < 0 {
		return n, c.err
	}
	return n, err
}

func (c *console) deleteFile(w http.ResponseWriter, r *http.Request) {
	opts := paddock.RemoveOpts{Recursive: r.URL.Query().Get("recursive") == "true"}
	a, h := c.sandbox(r)
	c.writeJSON(w, map[string]bool{"ok": true}, a.Remove(r.Context(), h, filePath(r), opts))
}
