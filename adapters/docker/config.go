package docker

import (
	"cmp"
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/cpstore"
	"github.com/paddockhq/paddock/internal/procid"
	"github.com/paddockhq/paddock/preview"
	"github.com/rs/zerolog"
)

// Runtimes an adapter can ask the engine for.
const (
	RuntimeAuto  = ""      // runsc when the engine has it, else runc (with a warning)
	RuntimeRunsc = "runsc" // gVisor; invalid when the engine lacks it, never a fall back
	RuntimeRunc  = "runc"  // the engine's default: a weaker boundary, chosen visibly
)

// Defaults of Config and of each sandbox (creation parameters override
// the per-sandbox ones).
const (
	DefaultImage        = "paddock/sandbox:latest"
	DefaultUser         = "1000:1000"
	DefaultCPUs         = 2.0
	DefaultMemoryMB     = 2048
	DefaultDiskMB       = 1024
	DefaultMaxProcesses = 256
	DefaultIdleTimeout  = 15 * time.Minute
	DefaultMaxAge       = 2 * time.Hour
	DefaultPreviewTTL   = paddock.DefaultPreviewTTL
)

// Config configures the adapter; the zero value of each field takes its
// default. Everything that weakens isolation is a visible field here or a
// visible creation parameter.
type Config struct {
	// Host is the engine address (unix:///var/run/docker.sock,
	// tcp://...); "" = DOCKER_HOST, else the default socket.
	Host string
	// Image is the sandbox image; it must have /bin/sh (busybox is
	// enough) and needs nc for previews. Whatever it holds at /tmp and
	// /workspace is hidden by the scratch mounts there. Default
	// paddock/sandbox:latest, which `go run ./cmd/paddock-image` builds.
	Image string
	// Runtime is RuntimeAuto, RuntimeRunsc or RuntimeRunc.
	Runtime string
	// User runs every command; numeric uid:gid, never root. Default
	// 1000:1000.
	User string
	// CPUs, MemoryMB, DiskMB and MaxProcesses are the default limits of a
	// sandbox. DiskMB is scratch space on tmpfs, drawn from the memory
	// budget: more disk than memory is invalid. Under runsc the process
	// limit also counts gVisor's own threads and stub processes (its
	// sentry panics when it cannot start one): allow it several hundred
	// more than the guest needs.
	CPUs         float64
	MemoryMB     int64
	DiskMB       int64
	MaxProcesses int64
	// IdleTimeout stops a sandbox nothing used for that long; MaxAge
	// destroys a sandbox that old. Negative disables the bound. Enforced
	// by Reap.
	IdleTimeout time.Duration
	MaxAge      time.Duration
	// Exec bounds the timeouts of Exec: the default of an exec that sets
	// none and the ceiling of any; zero fields = none.
	Exec paddock.ExecLimits
	// Owner names this runtime on the sandboxes it creates, so Reap can
	// find those whose owner is gone; "" = this process
	// (host/pid/start-time).
	Owner string
	// PreviewBaseURL is where the caller mounts Previews() (the URL of
	// <base>/preview/...); Expose is invalid until it is set.
	PreviewBaseURL string
	// PreviewKey signs preview tokens (at least 32 bytes); nil = a random
	// key of this process.
	PreviewKey []byte
	// Helpers says the image carries Paddock's helpers on its PATH:
	// paddock-watch and paddock-egress (cmd/paddock-watch and
	// cmd/paddock-egress, static binaries), which offer the watch and
	// network_policy capabilities. On by itself when Image is left to the
	// default (that image carries them); off otherwise unless set.
	Helpers bool
	// Egress is how the sandboxes' proxies reach the network, under their
	// network policies (with Helpers; docs/egress.md).
	Egress EgressConfig
	// CheckpointDir is where, on this host, checkpoints are kept; "" =
	// paddock/docker-checkpoints under the user's cache directory.
	CheckpointDir string
	// Checkpoints bound them (count and bytes over every sandbox, and how
	// long they outlive their sandbox); zero fields take paddock's
	// defaults.
	Checkpoints paddock.CheckpointLimits
	// Logger receives the adapter's logs; the zero Logger is silent.
	Logger zerolog.Logger
}

// New connects to the engine (lazily: nothing is sent until the first
// call) with API version negotiation, so an older engine is spoken to in
// its own version.
func New(cfg Config) (*Adapter, error) {
	if cfg.Image == "" {
		cfg.Image = DefaultImage
		cfg.Helpers = true
	}
	cfg.User = cmp.Or(cfg.User, DefaultUser)
	if err := checkUser(cfg.User); err != nil {
		return nil, err
	}
	if err := cfg.Exec.Validate(); err != nil {
		return nil, err
	}
	switch cfg.Runtime {
	case RuntimeAuto, RuntimeRunsc, RuntimeRunc:
	default:
		return nil, &paddock.InvalidError{Detail: "docker: unknown runtime " + strconv.Quote(cfg.Runtime)}
	}
	cfg.CPUs = cmp.Or(cfg.CPUs, DefaultCPUs)
	cfg.MemoryMB = cmp.Or(cfg.MemoryMB, DefaultMemoryMB)
	cfg.DiskMB = cmp.Or(cfg.DiskMB, DefaultDiskMB)
	cfg.MaxProcesses = cmp.Or(cfg.MaxProcesses, DefaultMaxProcesses)
	cfg.IdleTimeout = cmp.Or(cfg.IdleTimeout, DefaultIdleTimeout)
	cfg.MaxAge = cmp.Or(cfg.MaxAge, DefaultMaxAge)
	if _, err := (limits{CPUs: cfg.CPUs, MemoryMB: cfg.MemoryMB, DiskMB: cfg.DiskMB, MaxProcesses: cfg.MaxProcesses}).check(); err != nil {
		return nil, err
	}
	opts := []client.Opt{client.FromEnv}
	if cfg.Host != "" {
		opts = append(opts, client.WithHost(cfg.Host))
	}
	engine, err := client.New(opts...)
	if err != nil {
		return nil, &paddock.InvalidError{Detail: "docker: engine address: " + err.Error()}
	}
	a := &Adapter{cfg: cfg, log: cfg.Logger, engine: engine, owner: cfg.Owner,
		seedForks: strings.HasPrefix(engine.DaemonHost(), "unix://")}
	if a.gateConfig, err = cfg.Egress.Config(paddock.ProviderDocker, cfg.Logger); err != nil {
		_ = engine.Close()
		return nil, err
	}
	if a.checkpoints, err = cpstore.New(cmp.Or(cfg.CheckpointDir, defaultCheckpointDir()), cfg.Checkpoints, cfg.Logger); err != nil {
		_ = engine.Close()
		return nil, &paddock.InvalidError{Detail: "docker: " + err.Error()}
	}
	if a.owner == "" {
		a.owner = procid.Self()
	}
	previews, err := preview.NewService(preview.ServiceConfig{BaseURL: cfg.PreviewBaseURL, Key: cfg.PreviewKey,
		Dial: a.DialPort, Logger: cfg.Logger, Activity: func(name string) { a.touch(a.BuildHandle(name)) }})
	if err != nil {
		_ = engine.Close()
		return nil, &paddock.InvalidError{Detail: "docker: " + err.Error()}
	}
	// Nothing opens in the sandbox for a preview: it keeps no network.
	a.exposure = preview.NewExposure(previews, func(ctx context.Context, name string) error {
		_, err := a.inspect(ctx, name)
		return err
	}, "Config.PreviewBaseURL")
	return a, nil
}

// checkUser refuses root and anything not numeric uid[:gid] (a name
// would be resolved inside the image, where "root" may hide behind any
// name).
func checkUser(user string) error {
	uid, gid, hasGID := strings.Cut(user, ":")
	numeric := func(s string) bool { _, err := strconv.ParseUint(s, 10, 32); return err == nil }
	if !numeric(uid) || (hasGID && !numeric(gid)) {
		return &paddock.InvalidError{Detail: "docker: user must be numeric uid[:gid], got " + strconv.Quote(user)}
	}
	if n, _ := strconv.ParseUint(uid, 10, 32); n == 0 {
		return &paddock.InvalidError{Detail: "docker: refusing to run sandboxes as root (uid 0)"}
	}
	return nil
}
