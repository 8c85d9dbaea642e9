package e2b

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

// filesRequest builds a /files request of sandbox id for path, as the
// configured user.
func (a *Adapter) filesRequest(ctx context.Context, method, id, p string, body io.Reader) (*http.Request, error) {
	return a.filesRequestAs(ctx, method, id, p, a.cfg.User, body)
}

// filesRequestAs builds a /files request of sandbox id for path, as user.
func (a *Adapter) filesRequestAs(ctx context.Context, method, id, p, user string, body io.Reader) (*http.Request, error) {
	q := url.Values{"path": {p}, "username": {user}}
	req, err := http.NewRequestWithContext(ctx, method, a.envdBase(id)+"/files?"+q.Encode(), body)
	if err != nil {
		return nil, &paddock.InvalidError{Detail: "e2b: building a request: " + err.Error()}
	}
	envdHeaders{sandbox: id, user: a.cfg.User}.set(req.Header, false)
	return req, nil
}

// WriteFile streams r into path as a multipart upload (envd creates the
// parents), then sets mode's permission bits with chmod. Nothing is held
// whole in memory.
func (a *Adapter) WriteFile(ctx context.Context, h paddock.Handle, p string, mode fs.FileMode, r io.Reader) error {
	if err := paddock.ValidatePath(p); err != nil {
		return err
	}
	id, err := a.running(ctx, h)
	if err != nil {
		return err
	}
	err = a.rest.Upload(a.streaming, path.Base(p), r, func(body io.Reader) (*http.Request, error) {
		return a.filesRequest(ctx, http.MethodPost, id, p, body)
	})
	if err != nil {
		return err
	}
	return httpx.SetMode(ctx, a, h, p, mode)
}

// ReadFile streams the file at path; ErrNotFound when it is absent.
func (a *Adapter) ReadFile(ctx context.Context, h paddock.Handle, p string) (io.ReadCloser, error) {
	if err := paddock.ValidatePath(p); err != nil {
		return nil, err
	}
	id, err := a.running(ctx, h)
	if err != nil {
		return nil, err
	}
	req, err := a.filesRequest(ctx, http.MethodGet, id, p, nil)
	if err != nil {
		return nil, err
	}
	return a.rest.Download(a.streaming, req)
}
