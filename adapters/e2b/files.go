package e2b

import (
	"context"
	"io"
	"net/http"
	"net/url"

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

// fileTransfer is WriteFile and ReadFile through envd's /files as the configured
// user: an upload makes the parents.
type fileTransfer = httpx.Files

// openFiles finds the running sandbox of h for envd's /files.
func (a *Adapter) openFiles(ctx context.Context, h paddock.Handle) (*httpx.REST, httpx.FileRequest, error) {
	id, err := a.running(ctx, h)
	return a.rest, func(ctx context.Context, method, p string, body io.Reader) (*http.Request, error) {
		return a.filesRequest(ctx, method, id, p, body)
	}, err
}
