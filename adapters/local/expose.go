package local

import (
	"context"
	"net"
	"net/http"
	"strconv"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/preview"
)

// Previews is the preview proxy: mount it on the caller's server at
// /preview/ (Config.PreviewBaseURL says where). It reaches a port on the
// sandbox's own loopback: inside its network namespace when isolated.
func (a *Adapter) Previews() http.Handler { return a.previews.Handler() }

// PreviewBootstrap returns a single-use link (relative to the preview base
// URL's server) that sets p's token as an HttpOnly cookie and opens the
// preview: for browsers, which cannot send the header.
func (a *Adapter) PreviewBootstrap(h paddock.Handle, p paddock.Preview) (string, error) {
	return a.previews.Bootstrap(h.Name, p)
}

// Expose mints a preview of port: a URL under the preview base URL and a
// token, bound to this sandbox and port, valid for the TTL, sent only as a
// header.
func (a *Adapter) Expose(_ context.Context, h paddock.Handle, port int, opts paddock.ExposeOpts) (paddock.Preview, error) {
	p, err := a.previews.Mint(h.Name, port, opts, "Config.PreviewBaseURL")
	if err != nil {
		return paddock.Preview{}, err
	}
	if _, err := a.readMeta(h.Name); err != nil {
		return paddock.Preview{}, err
	}
	return p, nil
}

// Revoke ends a preview at once (in this adapter's proxy; expiry bounds it
// everywhere else).
func (a *Adapter) Revoke(_ context.Context, h paddock.Handle, p paddock.Preview) error {
	return a.previews.Revoke(h.Name, p)
}

// DialPort opens a connection to port on the sandbox's loopback: in the
// network namespace of its machine when it has one of its own, else on
// this host's loopback, which its commands share.
func (a *Adapter) DialPort(ctx context.Context, sandbox string, port int) (net.Conn, error) {
	m, err := a.readMeta(sandbox)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if isolated, _ := a.Isolated(); isolated && m.Egress != egressUnrestricted {
		mc, err := a.machineFor(a.dirOf(sandbox), m) // never the host's loopback
		if err != nil {
			return nil, err
		}
		return dialInNetwork(ctx, mc.pid, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// newPreviews sets up the preview service.
func (a *Adapter) newPreviews() error {
	svc, err := preview.NewService(preview.ServiceConfig{BaseURL: a.previewBase, Key: a.previewKey, Dial: a.DialPort, Logger: a.log})
	if err != nil {
		return &paddock.InvalidError{Detail: "local: " + err.Error()}
	}
	a.previews, a.previewKey = svc, nil
	return nil
}
