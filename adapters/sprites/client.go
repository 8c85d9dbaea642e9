package sprites

import (
	"net/http"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// errNoToken is the answer of every call without a configured token.
var errNoToken = &paddock.DeniedError{Detail: "sprites: no token configured"}

// spritePath is /v1/sprites/<name> plus more segments, all escaped.
func spritePath(name string, more ...string) string {
	p := "/v1/sprites/" + httpx.Escape(name)
	for _, m := range more {
		p += "/" + m
	}
	return p
}

// statusError normalises a non-success answer.
func statusError(status int, header http.Header, body []byte) error {
	return httpx.Status(status, body, header, retryField)
}

// rest is the adapter's REST client for its configuration.
func newREST(cfg Config) *httpx.REST {
	return &httpx.REST{
		Provider: paddock.ProviderSprites, BaseURL: cfg.BaseURL, MaxBody: maxBody, RetryField: retryField, Log: cfg.Logger,
		Authorize: func(req *http.Request) error {
			if cfg.Token.IsZero() {
				return errNoToken
			}
			req.Header.Set("Authorization", "Bearer "+cfg.Token.Reveal())
			return nil
		},
	}
}
