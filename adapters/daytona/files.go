package daytona

import (
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// WriteFile streams r into path as a multipart upload (the daemon makes
// the parents), then sets mode's permission bits with chmod when they are
// not the 0644 a new file gets. Nothing is held whole in memory, and r is
// never read after WriteFile returns.
func (a *Adapter) WriteFile(ctx context.Context, h paddock.Handle, p string, mode fs.FileMode, r io.Reader) error {
	if err := paddock.ValidatePath(p); err != nil {
		return err
	}
	tb, err := a.toolboxOf(ctx, h)
	if err != nil {
		return err
	}
	err = tb.rest.Upload(a.streaming, path.Base(p), r, func(body io.Reader) (*http.Request, error) {
		return tb.rest.NewRequest(ctx, http.MethodPost, "/files/upload", url.Values{"path": {p}}, body)
	})
	if err != nil {
		return err
	}
	return httpx.SetMode(ctx, a, h, p, mode)
}

// ReadFile streams the file at path; ErrNotFound when it is absent, a
// directory is invalid.
func (a *Adapter) ReadFile(ctx context.Context, h paddock.Handle, p string) (io.ReadCloser, error) {
	if err := paddock.ValidatePath(p); err != nil {
		return nil, err
	}
	tb, err := a.toolboxOf(ctx, h)
	if err != nil {
		return nil, err
	}
	req, err := tb.rest.NewRequest(ctx, http.MethodGet, "/files/download", url.Values{"path": {p}}, nil)
	if err != nil {
		return nil, err
	}
	return tb.rest.Download(a.streaming, req)
}
