package httpx

import (
	"io"
	"mime/multipart"
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
