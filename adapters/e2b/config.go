package e2b

import (
	"net/http"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
	"github.com/rs/zerolog"
)

// Defaults of Config.
const (
	DefaultBaseURL  = "https://api.e2b.app"
	DefaultTemplate = "base"
	DefaultUser     = "user" // the stock template's user
	DefaultTimeout  = 30 * time.Second
	DefaultTTL      = 30 * time.Minute
	// EnvdPort is the port envd listens on inside a sandbox.
	EnvdPort = 49983
	// maxBody bounds an ordinary JSON answer.
	maxBody = 16 << 20
	// maxListPages is how many pages ListAllNames walks before it refuses
	// with ErrTruncated rather than return a partial view.
	maxListPages = 40
)

// Metadata keys that make a sandbox one of ours, and name it.
const (
	metaName       = "paddock_name"
	metaMarker     = "paddock"
	metaOwner      = "paddock_owner"       // the lease's owner at creation
	metaLeaseUntil = "paddock_lease_until" // the lease's end at creation, RFC 3339
	metaMaxAge     = "paddock_max_age"     // Go duration
	metaCreatedAt  = "paddock_created_at"  // RFC 3339 (startedAt moves on resume)
)

// Config configures the adapter; the zero value of each field takes its
// default. A missing key is a denied error at first use, never a panic.
type Config struct {
	APIKey paddock.Secret // sent as X-API-Key (E2B_API_KEY)
	// BaseURL is the control plane; "" = https://api.e2b.app.
	BaseURL string
	// EnvdURL sends every envd call to this base instead of the sandbox's
	// own host, with the routing headers E2B's proxy also accepts (for
	// loopback servers and proxies); "" = https://49983-<id>.<domain>.
	EnvdURL string
	// Template is the sandbox template; "" = base.
	Template string
	// User is the Linux user inside the sandbox that commands run as and
	// files belong to; "" = user.
	User string
	// Timeout bounds each ordinary HTTP call; 0 = 30s.
	Timeout time.Duration
	// TTL is the sandbox lifetime asked for at create and resume, and kept
	// ahead by heartbeats while commands live; 0 = 30m.
	TTL time.Duration
	// MaxAge is recorded on each sandbox at creation: Reap destroys a
	// sandbox older than that, running or paused. 0 = none.
	MaxAge time.Duration
	// Exec bounds the timeouts of Exec; zero fields = none.
	Exec paddock.ExecLimits
	// Logger receives the adapter's logs; the zero Logger is silent.
	Logger zerolog.Logger
	// Transport replaces the HTTP transport (tests); nil = a clone of the
	// default.
	Transport http.RoundTripper
}

// errNoKey is the answer of every call without a configured key.
var errNoKey = &paddock.DeniedError{Detail: "e2b: no API key configured"}

// Adapter speaks to E2B. It is safe for concurrent use. No client follows
// a redirect.
type Adapter struct {
	cfg       Config
	log       zerolog.Logger
	rest      *httpx.REST  // control-plane calls
	client    *http.Client // ordinary calls, bounded by Timeout
	streaming *http.Client // process streams and file bodies: no overall timeout
}

// New returns an adapter for cfg.
func New(cfg Config) *Adapter {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.Template == "" {
		cfg.Template = DefaultTemplate
	}
	if cfg.User == "" {
		cfg.User = DefaultUser
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	transport := cfg.Transport
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	key := cfg.APIKey
	return &Adapter{
		cfg: cfg,
		log: cfg.Logger,
		rest: &httpx.REST{
			Provider: paddock.ProviderE2B, BaseURL: cfg.BaseURL, MaxBody: maxBody, Log: cfg.Logger,
			Authorize: func(req *http.Request) error {
				if key.IsZero() {
					return errNoKey
				}
				req.Header.Set("X-API-Key", key.Reveal())
				return nil
			},
		},
		client:    &http.Client{Transport: transport, Timeout: cfg.Timeout, CheckRedirect: httpx.NoRedirects},
		streaming: &http.Client{Transport: transport, CheckRedirect: httpx.NoRedirects},
	}
}

// String names the adapter and its base URL; no printed form of an
// adapter shows its key.
func (a Adapter) String() string { return "e2b.Adapter(" + a.cfg.BaseURL + ")" }

// GoString is String, for %#v.
func (a Adapter) GoString() string { return a.String() }
