package sprites

import (
	"crypto/tls"
	"net/http"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
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

// Adapter speaks to Sprites. It is safe for concurrent use. No client
// follows a redirect: the API sends none, and a 3xx is invalid.
type Adapter struct {
	cfg       Config
	log       zerolog.Logger
	rest      *httpx.REST  // ordinary calls: authorisation, answers, logging
	client    *http.Client // ordinary calls
	policy    *http.Client // the policy call: longer timeout, no pooled connections
	bound     *http.Client // bounded operations: deadline per call, a connection per request
	streaming *http.Client // streamed bodies (files, NDJSON): no overall timeout
	keep      keepalive    // exec sockets
}

// New returns an adapter for cfg.
func New(cfg Config) *Adapter {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.PolicyTimeout <= 0 {
		cfg.PolicyTimeout = DefaultPolicyTimeout
	}
	if cfg.WakeAttempts <= 0 {
		cfg.WakeAttempts = DefaultWakeAttempts
	}
	if cfg.PublicURLs == nil {
		yes := true
		cfg.PublicURLs = &yes
	}
	transport := cfg.Transport
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	policyTransport, boundTransport := transport, transport
	if t, ok := transport.(*http.Transport); ok {
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
		client:    &http.Client{Transport: transport, Timeout: cfg.Timeout, CheckRedirect: httpx.NoRedirects},
		policy:    &http.Client{Transport: policyTransport, Timeout: cfg.PolicyTimeout, CheckRedirect: httpx.NoRedirects},
		bound:     &http.Client{Transport: boundTransport, CheckRedirect: httpx.NoRedirects},
		streaming: &http.Client{Transport: transport, CheckRedirect: httpx.NoRedirects},
		keep:      keepalive{ping: pingInterval, wait: pongWait},
	}
}

// String names the adapter and its base URL; no printed form of an adapter
// shows its token.
func (a Adapter) String() string { return "sprites.Adapter(" + a.cfg.BaseURL + ")" }

// GoString is String, for %#v.
func (a Adapter) GoString() string { return a.String() }
