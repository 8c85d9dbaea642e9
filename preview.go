package paddock

import (
	"net/http"
	"time"
)

// Preview is a sandbox port exposed over HTTP: URL is where to send
// requests, Token authorises them and is only ever sent as a header (never
// in the URL), ExpiresAt bounds it. Revoke ends it earlier.
type Preview struct {
	URL       string    `json:"url"`
	Port      int       `json:"port"`
	Token     Secret    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Authorize sets the preview's credential on req as a bearer token.
func (p Preview) Authorize(req *http.Request) {
	req.Header.Set("Authorization", "Bearer "+p.Token.Reveal())
}

// Bounds of ExposeOpts.TTL.
const (
	DefaultPreviewTTL = 10 * time.Minute
	MaxPreviewTTL     = 24 * time.Hour
)

// ExposeOpts are the options of Expose.
type ExposeOpts struct {
	TTL time.Duration // how long the token is valid: 0 = 10 minutes; at most 24 hours
}

// ValidateExpose checks a port and options before any provider access and
// returns the options with defaults filled in, or an *InvalidError with
// detail expose_options.
func ValidateExpose(port int, o ExposeOpts) (ExposeOpts, error) {
	if port < 1 || port > 65535 {
		return o, &InvalidError{Detail: DetailExposeOptions + ": port outside 1..65535"}
	}
	switch {
	case o.TTL == 0:
		o.TTL = DefaultPreviewTTL
	case o.TTL < 0 || o.TTL > MaxPreviewTTL:
		return o, &InvalidError{Detail: DetailExposeOptions + ": ttl outside (0, 24h]"}
	}
	return o, nil
}
