package httpx

import (
	"context"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"strconv"

	"github.com/paddockhq/paddock"
)

// Multipart is a streamed multipart/form-data body of one file part: a
// goroutine copies the caller's reader into it as the request reads it.
// Call Done once the request returned: it ends the copy and waits for it,
// so the caller's reader is never read afterwards.
type Multipart struct {
	Body        io.Reader
	ContentType string
	pr          *io.PipeReader
	copied      chan struct{}
}

// NewMultipart starts streaming r as the file part field (file name
// filename).
func NewMultipart(field, filename string, r io.Reader) *Multipart {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	m := &Multipart{Body: pr, ContentType: mw.FormDataContentType(), pr: pr, copied: make(chan struct{})}
	go func() {
		defer close(m.copied)
		part, err := mw.CreateFormFile(field, filename)
		if err == nil {
			_, err = io.Copy(part, r)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	return m
}

// Done ends the copy (its next write fails) and waits for it.
func (m *Multipart) Done() {
	_ = m.pr.CloseWithError(io.ErrClosedPipe)
	<-m.copied
}

// Upload streams r, as the file part of a multipart body, in the request
// newRequest builds around that body, and answers the status as rest
// judges it. r is never read after Upload returns.
func (r *REST) Upload(client *http.Client, name string, content io.Reader, newRequest func(body io.Reader) (*http.Request, error)) error {
	upload := NewMultipart("file", name, content)
	req, err := newRequest(upload.Body)
	if err != nil {
		upload.Done()
		return err
	}
	req.Header.Set("Content-Type", upload.ContentType)
	res, err := client.Do(req)
	upload.Done()
	if err != nil {
		return Transport(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, r.MaxBody))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return r.StatusError(res.StatusCode, res.Header, body)
	}
	return nil
}

// Download sends req and answers a 200's body as the file; any other
// answer is rest's error, but a 400, which is invalid(path): not a file.
func (r *REST) Download(client *http.Client, req *http.Request) (io.ReadCloser, error) {
	res, err := client.Do(req)
	if err != nil {
		return nil, Transport(err)
	}
	if res.StatusCode == http.StatusOK {
		return res.Body, nil
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, r.MaxBody))
	if res.StatusCode == http.StatusBadRequest {
		return nil, &paddock.InvalidError{Detail: paddock.DetailPath + ": not a file", Status: res.StatusCode}
	}
	return nil, r.StatusError(res.StatusCode, res.Header, body)
}

// SetMode gives the file at p mode's permission bits with chmod, run
// through a, unless they are the 0644 a freshly uploaded file has: for
// providers whose upload takes no mode.
func SetMode(ctx context.Context, a paddock.Adapter, h paddock.Handle, p string, mode fs.FileMode) error {
	if mode.Perm() == 0o644 {
		return nil
	}
	res, err := a.Exec(ctx, h, paddock.NewCmd("chmod", strconv.FormatUint(uint64(mode.Perm()), 8), p), paddock.ExecOpts{})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return &paddock.UnavailableError{Detail: string(a.Provider()) + ": chmod of the written file failed: " + string(res.Stderr)}
	}
	return nil
}
