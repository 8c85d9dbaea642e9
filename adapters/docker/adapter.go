package docker

import (
	"context"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/cpstore"
	"github.com/paddockhq/paddock/adapters/internal/egress"
	"github.com/paddockhq/paddock/adapters/internal/restores"
	"github.com/rs/zerolog"
)

// The optional interfaces the adapter implements.
var _ interface {
	paddock.Adapter
	paddock.ExecLimiter
	paddock.LeaseKeeper
	paddock.IdleStopper
	paddock.CreateNewer
	paddock.DestroyOncer
	paddock.SessionTerminator
	paddock.Exposer
	paddock.FileManager
	paddock.DirWatcher
	paddock.PolicyApplier
} = (*Adapter)(nil)

// Adapter runs sandboxes as hardened containers on a Docker engine. It is
// safe for concurrent use; Close releases the engine client (sandboxes
// outlive it).
type Adapter struct {
	cfg      Config
	log      zerolog.Logger
	engine   *client.Client
	owner    string
	exposure // the previews, through the proxy of a preview.Service
	runtime  struct {
		once         sync.Once // the warning that runc stands in for runsc
		mu           sync.Mutex
		known, runsc bool // whether the engine has runsc, once asked
	}
	checkedImages sync.Map // image -> true: its scratch mounts passed the self-check
	stamps        stamper
	bg            sync.WaitGroup // background stamps
	gateConfig    egress.Config  // every sandbox's egress gate's
	links         egressLinks    // the egress relays this adapter serves
	checkpoints   *cpstore.Store
	restores      restores.Counter // the restores this adapter began, by name
	// seedForks: the engine is on this machine (a unix socket), so a fork
	// mounts its checkpoint's archive instead of streaming it (see Fork).
	seedForks bool
}

// Close ends the egress relays it serves (the sandboxes' proxies refuse
// until another adapter serves them), waits for background work and
// releases the engine client.
func (a *Adapter) Close() error {
	a.links.close()
	a.stamps.mu.Lock()
	a.stamps.closed = true
	a.stamps.mu.Unlock()
	a.bg.Wait()
	return a.engine.Close()
}

// String names the adapter by its engine address.
func (a *Adapter) String() string { return "docker.Adapter(" + a.engine.DaemonHost() + ")" }

// Ping reports whether the engine answers.
func (a *Adapter) Ping(ctx context.Context) error {
	_, err := a.engine.Ping(ctx, client.PingOptions{})
	return engineError("ping", err)
}

// ImageReady reports whether the configured image is on the engine: nil,
// or invalid saying how to get it (the default image: how to build it).
func (a *Adapter) ImageReady(ctx context.Context) error {
	_, err := a.engine.ImageInspect(ctx, a.cfg.Image)
	switch {
	case err == nil:
		return nil
	case cerrdefs.IsNotFound(err):
		return noImage(a.cfg.Image)
	}
	return engineError("image inspect", err)
}

// ImageBuiltByPaddock reports whether the configured image is on the
// engine and was built by sandboximage (cmd/paddock-image), which puts
// Paddock's helpers in it (see Config.Helpers).
func (a *Adapter) ImageBuiltByPaddock(ctx context.Context) bool {
	res, err := a.engine.ImageInspect(ctx, a.cfg.Image)
	return err == nil && res.Config != nil && res.Config.Labels[ImageLabel] == ImageTitle
}

// ImageLabel and ImageTitle are the label, and its value, that the
// images sandboximage builds carry.
const (
	ImageLabel = "org.opencontainers.image.title"
	ImageTitle = "paddock sandbox"
)

// Provider returns "docker".
func (a *Adapter) Provider() paddock.Provider { return paddock.ProviderDocker }

// Capabilities: suspend (pause), attach, tty, named spawn, session
// termination in both modes, create-new, destroy-once, expose, the file
// operations, signals and terminal resize, checkpoints and forks (of the
// scratch space); watch and network policy when Config.Helpers says the
// image carries Paddock's helpers. No public URL.
func (a *Adapter) Capabilities() paddock.CapabilitySet {
	caps := paddock.NewCapabilitySet(paddock.CapSuspend, paddock.CapAttach, paddock.CapTTY, paddock.CapNamedSpawn,
		paddock.CapTerminateSession, paddock.CapForceTerminateSession, paddock.CapCreateNew, paddock.CapDestroyOnce,
		paddock.CapExpose, paddock.CapFiles, paddock.CapSignal, paddock.CapResize, paddock.CapCheckpoint, paddock.CapFork)
	if a.cfg.Helpers {
		caps = caps.With(paddock.CapWatch, paddock.CapNetworkPolicy)
	}
	return caps
}

// BuildHandle returns {docker, name}.
func (a *Adapter) BuildHandle(name string) paddock.Handle {
	return paddock.Handle{Provider: paddock.ProviderDocker, Name: name}
}
