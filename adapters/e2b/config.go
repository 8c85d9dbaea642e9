package e2b

import (
	"cmp"
	"net/http"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
	"github.com/paddockhq/paddock/adapters/internal/restores"
	"github.com/paddockhq/paddock/adapters/internal/snapshots"
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
	// Checkpoints bounds the snapshots the adapter keeps (their count over
	// all sandboxes: E2B reports no size) and how long those of a sandbox
	// gone are kept; zero fields take paddock's defaults.
	Checkpoints paddock.CheckpointLimits
	// Exec bounds the timeouts of Exec; zero fields = none.
	Exec paddock.ExecLimits
	// Logger receives the adapter's logs; the zero Logger is silent.
	Logger zerolog.Logger
	// Transport replaces the HTTP transport (tests); nil = a clone of the
	// default.
	Transport http.RoundTripper
}

// New returns an adapter for cfg; a base URL that is not an absolute
// http(s) URL, a negative duration or invalid exec limits are an
// *paddock.InvalidError.
func New(cfg Config) (*Adapter, error) {
	cfg.BaseURL = cmp.Or(cfg.BaseURL, DefaultBaseURL)
	if err := httpx.CheckConfig(paddock.ProviderE2B, cfg.BaseURL, map[string]time.Duration{
		"Timeout": cfg.Timeout, "TTL": cfg.TTL, "MaxAge": cfg.MaxAge}, cfg.Exec); err != nil {
		return nil, err
	}
	if cfg.EnvdURL != "" {
		if err := httpx.CheckConfig(paddock.ProviderE2B, cfg.EnvdURL, nil, paddock.ExecLimits{}); err != nil {
			return nil, err
		}
	}
	limits, err := cfg.Checkpoints.WithDefaults()
	if err != nil {
		return nil, err
	}
	cfg.Template = cmp.Or(cfg.Template, DefaultTemplate)
	cfg.User = cmp.Or(cfg.User, DefaultUser)
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.TTL = cmp.Or(cfg.TTL, DefaultTTL)
	clients := httpx.NewClients(cfg.Transport, cfg.Timeout)
	key := cfg.APIKey
	a := &Adapter{
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
		client:    clients.Ordinary,
		streaming: clients.Streaming,
		limits:    limits,
		gone:      &snapshots.Gone{},
		restores:  &restores.Counter{},
	}
	a.fileTransfer = httpx.NewFiles(a, a.streaming, a.openFiles)
	return a, nil
}
