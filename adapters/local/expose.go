package local

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/preview"
)

// WithPreviewBaseURL is where the caller mounts Previews() (the URL of
// that server, without /preview/): Expose answers URLs under it. Without
// it, Expose is invalid (previews are not configured).
func WithPreviewBaseURL(url string) Option { return func(a *Adapter) { a.previewBase = url } }

// WithPreviewKey signs preview tokens (at least 32 bytes); default a random
// key, so tokens do not outlive the adapter.
func WithPreviewKey(key []byte) Option { return func(a *Adapter) { a.previewKey = key } }

// Previews is the preview proxy: mount it on the caller's server at
// /preview/ (WithPreviewBaseURL says where). It reaches a port on the
// sandbox's own loopback: inside its network namespace when isolated.
func (a *Adapter) Previews() http.Handler { return a.proxy }

// PreviewBootstrap returns a single-use link (relative to the preview base
// URL's server) that sets p's token as an HttpOnly cookie and opens the
// preview: for browsers, which cannot send the header.
func (a *Adapter) PreviewBootstrap(h paddock.Handle, p paddock.Preview) (string, error) {
	link, err := a.proxy.Bootstrap(p.Token.Reveal(), h.Name, p.Port)
	if err != nil {
		return "", &paddock.InvalidError{Detail: paddock.DetailExposeOptions + ": the preview is not valid here"}
	}
	return link, nil
}

// Expose mints a preview of port: a URL under the preview base URL and a
// token, bound to this sandbox and port, valid for the TTL, sent only as a
// header.
func (a *Adapter) Expose(_ context.Context, h paddock.Handle, port int, opts paddock.ExposeOpts) (paddock.Preview, error) {
	opts, err := paddock.ValidateExpose(port, opts)
	if err != nil {
		return paddock.Preview{}, err
	}
	if a.previewBase == "" {
		return paddock.Preview{}, &paddock.InvalidError{Detail: paddock.DetailExposeOptions + ": previews are not configured (WithPreviewBaseURL)"}
	}
	if _, err := a.readMeta(h.Name); err != nil {
		return paddock.Preview{}, err
	}
	token, expires := a.signer.Mint(h.Name, port, opts.TTL)
	return paddock.Preview{URL: strings.TrimRight(a.previewBase, "/") + a.proxy.Path(h.Name, port),
		Port: port, Token: paddock.NewSecret(token), ExpiresAt: expires}, nil
}

// Revoke ends a preview at once (in this adapter's proxy; expiry bounds it
// everywhere else).
func (a *Adapter) Revoke(_ context.Context, h paddock.Handle, p paddock.Preview) error {
	if err := a.proxy.Revoke(p.Token.Reveal(), h.Name, p.Port); err != nil {
		return &paddock.InvalidError{Detail: paddock.DetailExposeOptions + ": not a valid preview of this sandbox and port"}
	}
	return nil
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

// newPreviews sets up the signer and the proxy.
func (a *Adapter) newPreviews() error {
	a.signer = preview.NewRandomSigner()
	if a.previewKey != nil {
		s, err := preview.NewSigner(a.previewKey)
		if err != nil {
			return &paddock.InvalidError{Detail: "local: " + err.Error()}
		}
		a.signer = s
	}
	a.previewKey = nil
	a.proxy = preview.NewProxy(preview.Config{Signer: a.signer, Dial: a.DialPort, Logger: a.log})
	return nil
}
