package sprites

import (
	"cmp"
	"crypto/tls"
	"net/http"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
	"github.com/paddockhq/paddock/adapters/internal/restores"
	"github.com/rs/zerolog"
)

// Defaults of Config.
const (
	DefaultBaseURL       = "https://api.sprites.dev"
	DefaultTimeout       = 30 * time.Second
	DefaultPolicyTimeout = 90 * time.Second // a cold sprite takes 20-35 s to answer a policy
	DefaultWakeAttempts  = 6
	// maxBody bounds an ordinary JSON answer.
	maxBody = 16 << 20
	// retryField is where Sprites puts a 429's retry hint.
	retryField = "retry_after_seconds"
)

// Config configures the adapter; the zero value of each field takes its
// default. A missing token is a denied error at first use, never a panic.
type Config struct {
	Token   paddock.Secret // the bearer token (SPRITES_TOKEN)
	BaseURL string         // "" = https://api.sprites.dev
	// Timeout bounds each ordinary HTTP call; 0 = 30s.
	Timeout time.Duration
	// PolicyTimeout bounds the network-policy call, on a client of its own;
	// 0 = 90s.
	PolicyTimeout time.Duration
	// PublicURLs makes a freshly created sprite's URL public (auth
	// "public"); nil = true, false keeps "sprite" (organisation-only).
	PublicURLs *bool
	// CheckpointCreation enables the checkpoint capabilities and
	// operations; default false.
	CheckpointCreation bool
	// MaxRunAfterDisconnect is how long a spawned command keeps running with
	// no client attached; 0 = until it ends.
	MaxRunAfterDisconnect time.Duration
	// Exec bounds the timeouts of Exec: the default of an exec that sets
	// none and the ceiling of any; zero fields = none. Invalid limits make
	// every Exec invalid.
	Exec paddock.ExecLimits
	// WakeAttempts is how many times an exec or attach upgrade is tried
	// while the sprite refuses it with 503, as a new sprite does for a few
	// seconds (backing off from 250 ms to 2 s); 0 = 6, 1 = no retry.
	WakeAttempts int
	// MaxAge is recorded on each sprite created with a lease: Reap destroys
	// a sprite older than that. 0 = none.
	MaxAge time.Duration
	// Logger receives the adapter's logs; the zero Logger is silent.
	Logger zerolog.Logger
	// Transport replaces the HTTP transport (tests); nil = a clone of the
	// default.
	Transport http.RoundTripper
}

// New returns an adapter for cfg; a base URL that is not an absolute
// http(s) URL, a negative duration or count, or invalid exec limits are an
// *paddock.InvalidError.
func New(cfg Config) (*Adapter, error) {
	cfg.BaseURL = cmp.Or(cfg.BaseURL, DefaultBaseURL)
	if err := httpx.CheckConfig(paddock.ProviderSprites, cfg.BaseURL, map[string]time.Duration{
		"Timeout": cfg.Timeout, "PolicyTimeout": cfg.PolicyTimeout, "MaxRunAfterDisconnect": cfg.MaxRunAfterDisconnect,
		"MaxAge": cfg.MaxAge}, cfg.Exec); err != nil {
		return nil, err
	}
	if cfg.WakeAttempts < 0 {
		return nil, &paddock.InvalidError{Detail: "sprites config: WakeAttempts is negative"}
	}
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.PolicyTimeout = cmp.Or(cfg.PolicyTimeout, DefaultPolicyTimeout)
	cfg.WakeAttempts = cmp.Or(cfg.WakeAttempts, DefaultWakeAttempts)
	if cfg.PublicURLs == nil {
		yes := true
		cfg.PublicURLs = &yes
	}
	clients := httpx.NewClients(cfg.Transport, cfg.Timeout)
	policyTransport, boundTransport := clients.Transport, clients.Transport
	if t, ok := clients.Transport.(*http.Transport); ok {
		p := t.Clone()
		p.DisableKeepAlives = true // a late reply must never be read by the next call
		policyTransport = p
		b := t.Clone()
		// A fresh connection per request: Go replays a GET that fails on a
		// reused connection, and a bounded operation sends each request once.
		b.DisableKeepAlives = true
		b.ForceAttemptHTTP2 = false
		b.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{} // HTTP/1 only
		boundTransport = b
	}
	return &Adapter{
		cfg:       cfg,
		log:       cfg.Logger,
		rest:      newREST(cfg),
		client:    clients.Ordinary,
		policy:    &http.Client{Transport: policyTransport, Timeout: cfg.PolicyTimeout, CheckRedirect: httpx.NoRedirects},
		bound:     &http.Client{Transport: boundTransport, CheckRedirect: httpx.NoRedirects},
		streaming: clients.Streaming,
		keep:      keepalive{ping: pingInterval, wait: pongWait},
		restores:  &restores.Counter{},
	}, nil
}
