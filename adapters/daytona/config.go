package daytona

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
	DefaultAPIURL       = "https://app.daytona.io/api"
	DefaultTimeout      = 30 * time.Second
	DefaultStartTimeout = 2 * time.Minute
	// DefaultAutoArchive is how long a stopped sandbox stays before
	// Daytona archives it, in minutes (a week).
	DefaultAutoArchive = 10080
	// maxBody bounds an ordinary JSON answer.
	maxBody = 16 << 20
	// maxListPages is how many pages ListAllNames walks before it refuses
	// with ErrTruncated rather than return a partial view.
	maxListPages = 40
	// labelMarker is the label that makes a sandbox one of ours.
	labelMarker = "paddock"
)

// Config configures the adapter; the zero value of each field takes its
// default. A missing key is a denied error at first use, never a panic.
type Config struct {
	// APIKey is sent as a Bearer token on both planes: an API key
	// (DAYTONA_API_KEY) or a JWT.
	APIKey paddock.Secret
	// APIURL is the control plane; "" = https://app.daytona.io/api.
	APIURL string
	// Snapshot is what sandboxes are created from; "" = the
	// organisation's default.
	Snapshot string
	// OrganizationID is sent as X-Daytona-Organization-ID, and only when
	// APIKey is a JWT (an API key belongs to one organisation already).
	OrganizationID string
	// Timeout bounds each ordinary HTTP call; 0 = 30s.
	Timeout time.Duration
	// StartTimeout bounds the wait for a sandbox to reach started after a
	// create or a start; 0 = 2m.
	StartTimeout time.Duration
	// AutoStopMinutes stops a sandbox idle that long; 0 = never (the
	// runtime decides when to suspend).
	AutoStopMinutes int
	// AutoArchiveMinutes archives a sandbox stopped that long; 0 = a week.
	AutoArchiveMinutes int
	// MaxAge is recorded on each sandbox at creation: Reap destroys a
	// sandbox older than that. 0 = none.
	MaxAge time.Duration
	// Exec bounds the timeouts of Exec; zero fields = none.
	Exec paddock.ExecLimits
	// Logger receives the adapter's logs; the zero Logger is silent.
	// Checkpoints bounds the snapshots the adapter keeps (their count over
	// all sandboxes: Daytona reports no size) and how long those of a
	// sandbox gone are kept; zero fields take paddock's defaults.
	Checkpoints paddock.CheckpointLimits
	Logger      zerolog.Logger
	// Transport replaces the HTTP transport (tests); nil = a clone of the
	// default.
	Transport http.RoundTripper
}

// New returns an adapter for cfg; a base URL that is not an absolute
// http(s) URL, a negative duration or invalid exec limits are an
// *paddock.InvalidError.
func New(cfg Config) (*Adapter, error) {
	cfg.APIURL = cmp.Or(cfg.APIURL, DefaultAPIURL)
	if err := httpx.CheckConfig(paddock.ProviderDaytona, cfg.APIURL, map[string]time.Duration{
		"Timeout": cfg.Timeout, "StartTimeout": cfg.StartTimeout, "MaxAge": cfg.MaxAge}, cfg.Exec); err != nil {
		return nil, err
	}
	if cfg.AutoStopMinutes < 0 || cfg.AutoArchiveMinutes < 0 {
		return nil, &paddock.InvalidError{Detail: "daytona config: AutoStopMinutes and AutoArchiveMinutes must not be negative"}
	}
	limits, err := cfg.Checkpoints.WithDefaults()
	if err != nil {
		return nil, err
	}
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.StartTimeout = cmp.Or(cfg.StartTimeout, DefaultStartTimeout)
	cfg.AutoArchiveMinutes = cmp.Or(cfg.AutoArchiveMinutes, DefaultAutoArchive)
	clients := httpx.NewClients(cfg.Transport, cfg.Timeout)
	a := &Adapter{cfg: cfg, log: cfg.Logger, client: clients.Ordinary, streaming: clients.Streaming, poll: 100 * time.Millisecond,
		limits: limits, gone: &snapshots.Gone{}, restores: &restores.Counter{}}
	a.rest = &httpx.REST{Provider: paddock.ProviderDaytona, BaseURL: cfg.APIURL, MaxBody: maxBody, Log: cfg.Logger,
		Authorize: a.authorize}
	a.fileTransfer = httpx.NewFiles(a, a.streaming, a.openFiles)
	return a, nil
}
