package local

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/cpstore"
	"github.com/paddockhq/paddock/adapters/internal/drain"
	"github.com/paddockhq/paddock/adapters/internal/egress"
	"github.com/rs/zerolog"
)

// Adapter runs sandboxes as directories on this machine and commands as
// host processes. Use New; every method is safe for concurrent use.
type Adapter struct {
	root         string
	removeRoot   bool // Close removes root (Config.TempRoot)
	log          zerolog.Logger
	isolation    Isolation
	processLimit int
	fileLimit    int64
	keepFinished int
	journalLimit int64
	drain        drain.Policy // when leftovers are killed, how long their output may take
	execLimits   paddock.ExecLimits
	maxAge       time.Duration // recorded at creation; 0 = none
	initProgram  string        // "" = this program, re-executed
	previewBase  string
	previewKey   []byte        // only until New made the signer
	gateConfig   egress.Config // every sandbox's egress gate's
	checkpoints  *cpstore.Store
	exposure     // the previews, through the proxy of a preview.Service

	probe       sync.Once
	isolated    bool   // the outcome of the probe
	isolatedWhy string // why not, when not
	cgroups     cgroupHost
	noCgroups   bool // tests: do without cgroups

	mu       sync.Mutex
	sessions map[string]*session // live sessions this adapter supervises, by sandbox dir + id
	machines map[string]*machine // the sandboxes' inits this adapter started, by sandbox dir
	creating map[string]bool     // named spawns and machine starts in progress
	closed   bool
	wg       sync.WaitGroup // session supervisors
	gates    sync.WaitGroup // the egress gates' goroutines, which end with their machines
}

// defaultRoot is paddock/local under the user's cache directory.
func defaultRoot() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "paddock", "local")
	}
	return filepath.Join(os.TempDir(), "paddock-local")
}

// Root is the directory holding the sandboxes.
func (a *Adapter) Root() string { return a.root }

// Each role file states the optional interface it implements.
var _ paddock.Adapter = (*Adapter)(nil)

// Provider returns "local".
func (a *Adapter) Provider() paddock.Provider { return paddock.ProviderLocal }

// Capabilities are exactly what the conformance suite proves of this adapter.
func (a *Adapter) Capabilities() paddock.CapabilitySet {
	caps := paddock.NewCapabilitySet(
		paddock.CapSuspend, paddock.CapAttach, paddock.CapTTY, paddock.CapTerminateSession,
		paddock.CapForceTerminateSession, paddock.CapCreateNew, paddock.CapDestroyOnce, paddock.CapNamedSpawn,
		paddock.CapExpose, paddock.CapFiles, paddock.CapSignal, paddock.CapResize,
		paddock.CapCheckpoint, paddock.CapFork,
	)
	if watchSupported {
		caps = caps.With(paddock.CapWatch)
	}
	if isolated, _ := a.Isolated(); isolated {
		caps = caps.With(paddock.CapNetworkPolicy) // enforced in isolated sandboxes only (egress.go)
	}
	return caps
}

// BuildHandle returns {local, name}.
func (a *Adapter) BuildHandle(name string) paddock.Handle {
	return paddock.Handle{Provider: paddock.ProviderLocal, Name: name}
}

// Isolated reports whether commands run in namespaces, probing the host on
// first use, and why not when they do not.
func (a *Adapter) Isolated() (bool, string) {
	a.probe.Do(a.probeIsolation)
	return a.isolated, a.isolatedWhy
}

// probeIsolation decides once whether commands can be isolated (an
// isolated machine starts and says it is ready), and finds the cgroups.
func (a *Adapter) probeIsolation() {
	if !a.noCgroups {
		a.cgroups = probeCgroups()
	}
	switch {
	case a.isolation == IsolationNone:
		a.isolatedWhy = "disabled by configuration"
	case !namespacesSupported:
		a.isolatedWhy = "namespaces need Linux"
	default:
		m, err := startMachine("probe", a.initProgram, initConfig{Isolated: true, Loopback: true, Hostname: "paddock-probe"}, nil)
		if err == nil {
			m.close()
			a.isolated = true
			return
		}
		a.isolatedWhy = err.Error()
	}
	if a.isolation == IsolationAuto {
		a.log.Warn().Str("reason", a.isolatedWhy).Msg("local: commands run without namespace isolation")
	}
}

// requireIsolation answers an invalid error when namespaces were required
// but are unavailable.
func (a *Adapter) requireIsolation() error {
	ok, why := a.Isolated()
	if !ok && a.isolation == IsolationNamespaces {
		return &paddock.InvalidError{Detail: "local: namespace isolation required but unavailable: " + why}
	}
	return nil
}

// Close stops every command this adapter supervises (their sessions record
// the kill) and waits for its goroutines. Sandboxes stay on disk, except
// under a TempRoot, which Close removes.
func (a *Adapter) Close() error {
	a.mu.Lock()
	a.closed = true
	live := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		live = append(live, s)
	}
	a.mu.Unlock()
	for _, s := range live {
		s.kill()
	}
	a.wg.Wait()
	a.mu.Lock()
	machines := a.machines
	a.machines = map[string]*machine{}
	a.mu.Unlock()
	for _, m := range machines {
		m.close()
	}
	a.gates.Wait()
	if a.removeRoot {
		_ = os.RemoveAll(a.root)
	}
	return nil
}

// errClosed is the answer of a closed adapter.
var errClosed = errors.New("local adapter closed")
