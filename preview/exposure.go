package preview

import (
	"context"
	"net/http"

	"github.com/paddockhq/paddock"
)

// Exposure is an adapter's whole side of previews over a Service, to
// embed in the adapter: Expose and Revoke as paddock.Exposer has them, the
// proxy to mount (Previews) and the browser's bootstrap link, so every
// adapter that serves previews itself offers the same methods the same
// way.
type Exposure struct {
	service *Service
	exists  func(ctx context.Context, sandbox string) error
	hint    string
}

// NewExposure is the exposure of svc: exists answers not_found for a
// sandbox that is not there; hint names the setting of the base URL, for
// the invalid answer without one.
func NewExposure(svc *Service, exists func(ctx context.Context, sandbox string) error, hint string) Exposure {
	return Exposure{service: svc, exists: exists, hint: hint}
}

// Previews is the preview proxy: mount it on the caller's server at
// /preview/, where the base URL says.
func (e Exposure) Previews() http.Handler { return e.service.Handler() }

// PreviewBootstrap returns a single-use link (relative to the base URL's
// server) that sets p's token as an HttpOnly cookie and opens the
// preview: for browsers, which cannot send the header.
func (e Exposure) PreviewBootstrap(h paddock.Handle, p paddock.Preview) (string, error) {
	return e.service.Bootstrap(h.Name, p)
}

// Expose mints a preview of port: a URL under the base URL and a token,
// bound to this sandbox and port, valid for the TTL, sent only as a
// header.
func (e Exposure) Expose(ctx context.Context, h paddock.Handle, port int, opts paddock.ExposeOpts) (paddock.Preview, error) {
	p, err := e.service.Mint(h.Name, port, opts, e.hint)
	if err != nil {
		return paddock.Preview{}, err
	}
	if err := e.exists(ctx, h.Name); err != nil {
		return paddock.Preview{}, err
	}
	return p, nil
}

// Revoke ends a preview at once (in this process's proxy; expiry bounds
// it everywhere else).
func (e Exposure) Revoke(_ context.Context, h paddock.Handle, p paddock.Preview) error {
	return e.service.Revoke(h.Name, p)
}
