package httpx

import (
	"context"
	"io"
	"io/fs"
	"net/http"
	"path"

	"github.com/paddockhq/paddock"
)

// Files is WriteFile and ReadFile for a provider whose file daemon takes
// an upload as multipart (making the parents) and serves a download by
// GET, and whose upload takes no mode (chmod sets it after): embed it in
// the adapter (see NewFiles). Nothing is held whole in memory, and an
// upload's reader is never read after WriteFile returns.
type Files struct {
	adapter   paddock.Adapter
	streaming *http.Client
	open      func(ctx context.Context, h paddock.Handle) (*REST, FileRequest, error)
}

// NewFiles is the Files of adapter (which runs the chmod): bodies travel
// on streaming (no overall timeout), and open finds h's file daemon, the
// REST its answers are read with and how to build the request of a file
// (neither is used when it fails).
func NewFiles(adapter paddock.Adapter, streaming *http.Client, open func(ctx context.Context, h paddock.Handle) (*REST, FileRequest, error)) Files {
	return Files{adapter: adapter, streaming: streaming, open: open}
}

// FileRequest builds the request of the file at p with method: POST with
// the body to upload, GET to download.
type FileRequest func(method, p string, body io.Reader) (*http.Request, error)

// WriteFile streams r into p, then sets mode's permission bits.
func (f Files) WriteFile(ctx context.Context, h paddock.Handle, p string, mode fs.FileMode, r io.Reader) error {
	if err := paddock.ValidatePath(p); err != nil {
		return err
	}
	rest, request, err := f.open(ctx, h)
	if err != nil {
		return err
	}
	err = rest.Upload(f.streaming, path.Base(p), r, func(body io.Reader) (*http.Request, error) {
		return request(http.MethodPost, p, body)
	})
	if err != nil {
		return err
	}
	return SetMode(ctx, f.adapter, h, p, mode)
}

// ReadFile streams the file at p; not_found when it is absent.
func (f Files) ReadFile(ctx context.Context, h paddock.Handle, p string) (io.ReadCloser, error) {
	if err := paddock.ValidatePath(p); err != nil {
		return nil, err
	}
	rest, request, err := f.open(ctx, h)
	if err != nil {
		return nil, err
	}
	req, err := request(http.MethodGet, p, nil)
	if err != nil {
		return nil, err
	}
	return rest.Download(f.streaming, req)
}
