package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/drain"
	"github.com/paddockhq/paddock/preview"
	"github.com/rs/zerolog"
)

// Isolation says how commands are contained.
type Isolation string

// The isolation modes.
const (
	// IsolationAuto uses namespaces where the host allows them and runs
	// unisolated otherwise, saying so once in the log and in Info.Raw.
	IsolationAuto Isolation = "auto"
	// IsolationNamespaces requires namespaces: without them commands fail
	// with an invalid error rather than run uncontained.
	IsolationNamespaces Isolation = "namespaces"
	// IsolationNone runs commands as plain host processes in their own
	// process groups.
	IsolationNone Isolation = "none"
)

// Defaults of the options.
const (
	DefaultProcessLimit     = 512
	DefaultFileSizeLimit    = 4 << 30
	DefaultFinishedSessions = 1000
	// DefaultExitGrace is how long processes a command leaves behind may
	// keep its output open after it exits, before they are killed.
	DefaultExitGrace = 250 * time.Millisecond
	// DefaultDrainLimit bounds the wait for the end of a command's output
	// once the processes holding it were killed.
	DefaultDrainLimit = 5 * time.Second
	// DefaultSessionOutputLimit caps the journal of one session.
	DefaultSessionOutputLimit = 1 << 30
)

// Adapter runs sandboxes as directories on this machine and commands as
// host processes. Use New; every method is safe for concurrent use.
type Adapter struct {
	root         string
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
	previewKey   []byte // only until New made the signer
	previews     *preview.Service

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
}

// Option configures New.
type Option func(*Adapter)

// WithRoot puts sandboxes under dir. Default: paddock/local under the
// user's cache directory (or the temp directory when there is none).
func WithRoot(dir string) Option { return func(a *Adapter) { a.root = dir } }

// WithLogger sets the logger; default silent.
func WithLogger(l zerolog.Logger) Option { return func(a *Adapter) { a.log = l } }

// WithIsolation sets the isolation mode; default IsolationAuto.
func WithIsolation(i Isolation) Option { return func(a *Adapter) { a.isolation = i } }

// WithProcessLimit caps the processes of one sandbox (a pids cgroup as
// root, RLIMIT_NPROC of its init otherwise, which counts every process of
// the user); default 512. It applies when isolated, and as root in both
// modes.
func WithProcessLimit(n int) Option { return func(a *Adapter) { a.processLimit = n } }

// WithFileSizeLimit caps the size of any file a command of an isolated
// sandbox writes; default 4 GiB.
func WithFileSizeLimit(bytes int64) Option { return func(a *Adapter) { a.fileLimit = bytes } }

// WithFinishedSessions is how many finished sessions each sandbox keeps for
// attach and listing; older ones are pruned. Default 1000.
func WithFinishedSessions(n int) Option { return func(a *Adapter) { a.keepFinished = n } }

// WithExitGrace is how long the processes a command leaves behind may keep
// its output open after the command exits; then every process still
// holding it is killed, and the output is read to its end. Processes that
// closed the output (a daemon writing to a log) are left alone. Default
// 250 ms; 0 kills them at once.
func WithExitGrace(d time.Duration) Option { return func(a *Adapter) { a.drain.Grace = d } }

// WithDrainLimit bounds the wait for the end of a command's output once the
// processes holding it were killed. A process that survives the kill for
// that long makes the command end with the error output_truncated instead
// of its exit: the output is not whole. Default 5 s.
func WithDrainLimit(d time.Duration) Option { return func(a *Adapter) { a.drain.Limit = d } }

// WithSessionOutputLimit caps the output one session's journal holds, in
// bytes (stdout and stderr together); default 1 GiB. A
// session that reaches it is killed, its journal keeps its output up to
// the cap, and every subscriber, live or attaching later, gets that output
// and then the error paddock.ErrSessionOutputLimit.
func WithSessionOutputLimit(bytes int64) Option { return func(a *Adapter) { a.journalLimit = bytes } }

// WithExecLimits sets the default timeout of an Exec that sets none and the
// ceiling of any Exec timeout; default none (an Exec without a timeout
// runs until it exits).
func WithExecLimits(l paddock.ExecLimits) Option { return func(a *Adapter) { a.execLimits = l } }

// WithMaxAge is recorded on each sandbox at creation: Reap destroys a
// sandbox older than that. Default none.
func WithMaxAge(d time.Duration) Option { return func(a *Adapter) { a.maxAge = d } }

// WithInitProgram runs each sandbox's init as the program at path, built
// from cmd/paddock-init of the same Paddock version, instead of this
// program re-executed (the default). Such an init starts sooner: none of
// the embedding program's package initialisation runs in it, and a program
// built with the race detector does not start the detector in every
// sandbox. An init of another version refuses to start.
func WithInitProgram(path string) Option { return func(a *Adapter) { a.initProgram = path } }

// New returns a local adapter. Invalid options are reported as an
// *paddock.InvalidError. On Windows it answers paddock.ErrNotSupported:
// the adapter needs a Unix system (on Linux it isolates sandboxes with
// namespaces; elsewhere they run unisolated).
func New(opts ...Option) (*Adapter, error) {
	a := &Adapter{
		isolation: IsolationAuto, processLimit: DefaultProcessLimit, fileLimit: DefaultFileSizeLimit,
		keepFinished: DefaultFinishedSessions, sessions: map[string]*session{}, machines: map[string]*machine{}, creating: map[string]bool{},
		drain: drain.Policy{Grace: DefaultExitGrace, Limit: DefaultDrainLimit}, journalLimit: DefaultSessionOutputLimit,
	}
	if unsupportedSystem != "" {
		return nil, fmt.Errorf("local: %w: %s", paddock.ErrNotSupported, unsupportedSystem)
	}
	for _, o := range opts {
		o(a)
	}
	switch a.isolation {
	case IsolationAuto, IsolationNamespaces, IsolationNone:
	default:
		return nil, &paddock.InvalidError{Detail: "local: unknown isolation " + string(a.isolation)}
	}
	if a.processLimit <= 0 || a.fileLimit <= 0 || a.keepFinished <= 0 || a.drain.Limit <= 0 || a.journalLimit <= 0 {
		return nil, &paddock.InvalidError{Detail: "local: limits must be positive"}
	}
	if err := a.execLimits.Validate(); err != nil {
		return nil, err
	}
	if a.drain.Grace < 0 {
		return nil, &paddock.InvalidError{Detail: "local: the exit grace must not be negative"}
	}
	if a.root == "" {
		a.root = defaultRoot()
	}
	abs, err := filepath.Abs(a.root)
	if err != nil {
		return nil, &paddock.InvalidError{Detail: "local: root: " + err.Error()}
	}
	a.root = abs
	if a.initProgram != "" {
		if a.initProgram, err = filepath.Abs(a.initProgram); err == nil {
			_, err = os.Stat(a.initProgram)
		}
		if err != nil {
			return nil, &paddock.InvalidError{Detail: "local: init program: " + err.Error()}
		}
	}
	if err := a.newPreviews(); err != nil {
		return nil, err
	}
	return a, nil
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

// Compile-time checks of the interfaces the adapter implements.
var (
	_ paddock.Adapter           = (*Adapter)(nil)
	_ paddock.CreateNewer       = (*Adapter)(nil)
	_ paddock.DestroyOncer      = (*Adapter)(nil)
	_ paddock.SessionTerminator = (*Adapter)(nil)
	_ paddock.HostPather        = (*Adapter)(nil)
	_ paddock.Exposer           = (*Adapter)(nil)
	_ paddock.FileManager       = (*Adapter)(nil)
)

// Provider returns "local".
func (a *Adapter) Provider() paddock.Provider { return paddock.ProviderLocal }

// Capabilities are exactly what the conformance suite proves of this adapter.
func (a *Adapter) Capabilities() paddock.CapabilitySet {
	caps := paddock.NewCapabilitySet(
		paddock.CapSuspend, paddock.CapAttach, paddock.CapTTY, paddock.CapTerminateSession,
		paddock.CapForceTerminateSession, paddock.CapCreateNew, paddock.CapDestroyOnce, paddock.CapNamedSpawn,
		paddock.CapExpose, paddock.CapFiles, paddock.CapSignal, paddock.CapResize,
	)
	if watchSupported {
		caps = caps.With(paddock.CapWatch)
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
// the kill) and waits for its goroutines. Sandboxes stay on disk.
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
	return nil
}

// errClosed is the answer of a closed adapter.
var errClosed = errors.New("local adapter closed")
