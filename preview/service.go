package preview

import (
	"net/http"
	"strings"

	"github.com/paddockhq/paddock"
	"github.com/rs/zerolog"
)

// Service is an adapter's side of previews: it mints the Preview values an
// exposed port is answered with, revokes them, makes bootstrap links, and serves the proxy
// that checks their tokens. Adapters share it so previews behave the same
// on every provider that offers them.
type Service struct {
	base   string
	signer *Signer
	proxy  *Proxy
}

// ServiceConfig configures a Service.
type ServiceConfig struct {
	// BaseURL is where the caller mounts Handler() (the URL of the server,
	// without the /preview/ prefix); exposing a port is invalid until it
	// is set.
	BaseURL string
	// Key signs tokens (at least 32 bytes); nil = a random key, so tokens
	// do not outlive the process.
	Key []byte
	// Dial reaches a sandbox's port (required).
	Dial DialFunc
	// Activity, if set, is told of each forwarded request.
	Activity func(sandbox string)
	Logger   zerolog.Logger
}

// NewService returns the service for cfg, or the signer's error for a key
// too short.
func NewService(cfg ServiceConfig) (*Service, error) {
	signer := NewRandomSigner()
	if cfg.Key != nil {
		s, err := NewSigner(cfg.Key)
		if err != nil {
			return nil, err
		}
		signer = s
	}
	proxy := NewProxy(Config{Signer: signer, Dial: cfg.Dial, Activity: cfg.Activity, Logger: cfg.Logger})
	return &Service{base: cfg.BaseURL, signer: signer, proxy: proxy}, nil
}

// Handler is the preview proxy, to mount at /preview/ on the server at the
// base URL.
func (s *Service) Handler() http.Handler { return s.proxy }

// Mint validates exposing port on sandbox and returns its preview: a
// URL under the base URL and a token bound to the sandbox and port, valid
// for the TTL, sent only as a header. Without a base URL it is invalid
// (previews are not configured; hint names the setting).
func (s *Service) Mint(sandbox string, port int, opts paddock.ExposeOpts, hint string) (paddock.Preview, error) {
	opts, err := paddock.ValidateExpose(port, opts)
	if err != nil {
		return paddock.Preview{}, err
	}
	if s.base == "" {
		return paddock.Preview{}, &paddock.InvalidError{Detail: paddock.DetailExposeOptions + ": previews are not configured (" + hint + ")"}
	}
	token, expires := s.signer.Mint(sandbox, port, opts.TTL)
	return paddock.Preview{URL: strings.TrimRight(s.base, "/") + s.proxy.Path(sandbox, port),
		Port: port, Token: paddock.NewSecret(token), ExpiresAt: expires}, nil
}

// Revoke ends p at once in this process's proxy (expiry bounds it
// everywhere else); a token that is not a preview of sandbox and its port
// is invalid.
func (s *Service) Revoke(sandbox string, p paddock.Preview) error {
	if err := s.proxy.Revoke(p.Token.Reveal(), sandbox, p.Port); err != nil {
		return &paddock.InvalidError{Detail: paddock.DetailExposeOptions + ": not a valid preview of this sandbox and port"}
	}
	return nil
}

// Bootstrap returns a single-use link (relative to the base URL's server)
// that sets p's token as an HttpOnly cookie and opens the preview: for
// browsers, which cannot send the header.
func (s *Service) Bootstrap(sandbox string, p paddock.Preview) (string, error) {
	link, err := s.proxy.Bootstrap(p.Token.Reveal(), sandbox, p.Port)
	if err != nil {
		return "", &paddock.InvalidError{Detail: paddock.DetailExposeOptions + ": the preview is not valid here"}
	}
	return link, nil
}
