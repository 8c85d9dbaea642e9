package local

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/cpstore"
	"github.com/paddockhq/paddock/adapters/internal/drain"
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

// Defaults of Config.
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

// Config configures the adapter; the zero value of each field takes its
// default.
type Config struct {
	// Root is the directory the sandboxes live under; "" = paddock/local
	// under the user's cache directory (or the temp directory when there
	// is none).
	Root string
	// TempRoot puts the sandboxes under a fresh temporary directory that
	// Close removes, for demos, examples and tests; Root must then be "".
	TempRoot bool
	// Logger receives the adapter's logs; the zero Logger is silent.
	Logger zerolog.Logger
	// Isolation is how commands are contained; "" = IsolationAuto.
	Isolation Isolation
	// ProcessLimit caps the processes of one sandbox (a pids cgroup as
	// root, RLIMIT_NPROC of its init otherwise, which counts every process
	// of the user); 0 = 512. It applies when isolated, and as root in both
	// modes.
	ProcessLimit int
	// FileSizeLimit caps the size of any file a command of an isolated
	// sandbox writes; 0 = 4 GiB.
	FileSizeLimit int64
	// FinishedSessions is how many finished sessions each sandbox keeps for
	// attach and listing; older ones are pruned. 0 = 1000.
	FinishedSessions int
	// ExitGrace is how long the processes a command leaves behind may keep
	// its output open after the command exits; then every process still
	// holding it is killed, and the output is read to its end. Processes
	// that closed the output (a daemon writing to a log) are left alone.
	// nil = 250 ms; zero kills them at once.
	ExitGrace *time.Duration
	// DrainLimit bounds the wait for the end of a command's output once
	// the processes holding it were killed. A process that survives the
	// kill for that long makes the command end with the error
	// output_truncated instead of its exit: the output is not whole. 0 =
	// 5 s. It counts only while a holder can be seen and killed.
	DrainLimit time.Duration
	// DrainUnseen bounds the wait for the end of a command's output while
	// no process holding it can be seen: a process of this program's own
	// between fork and exec (another command starting, which holds every
	// descriptor until its exec closes them) on a saturated machine. Past
	// it the command ends output_truncated too. 0 = 1 min
	// (drain.DefaultUnseen).
	DrainUnseen time.Duration
	// SessionOutputLimit caps the output one session's journal holds, in
	// bytes (stdout and stderr together); 0 = 1 GiB. A session that
	// reaches it is killed, its journal keeps its output up to the cap,
	// and every subscriber, live or attaching later, gets that output and
	// then the error paddock.ErrSessionOutputLimit.
	SessionOutputLimit int64
	// Exec is the default timeout of an Exec that sets none and the
	// ceiling of any Exec timeout; zero fields = none (an Exec without a
	// timeout runs until it exits).
	Exec paddock.ExecLimits
	// MaxAge is recorded on each sandbox at creation: Reap destroys a
	// sandbox older than that. 0 = none.
	MaxAge time.Duration
	// InitProgram runs each sandbox's init as the program at this path,
	// built from cmd/paddock-init of the same Paddock version, instead of
	// this program re-executed ("", the default). Such an init starts
	// sooner: none of the embedding program's package initialisation runs
	// in it, and a program built with the race detector does not start
	// the detector in every sandbox. An init of another version refuses to
	// start.
	InitProgram string
	// PreviewBaseURL is where the caller mounts Previews() (the URL of that
	// server, without /preview/): Expose answers URLs under it. "" =
	// previews are not configured, and Expose is invalid.
	PreviewBaseURL string
	// PreviewKey signs preview tokens (at least 32 bytes); nil = a random
	// key, so tokens do not outlive the adapter.
	PreviewKey []byte
	// Egress is how isolated sandboxes' proxies reach the network, under
	// each sandbox's network policy.
	Egress EgressConfig
	// Checkpoints bound the checkpoints kept under the root (count and
	// bytes over every sandbox, and how long they outlive their sandbox);
	// zero fields take paddock's defaults.
	Checkpoints paddock.CheckpointLimits

	unkillable bool // tests: the processes holding a command's output survive the kill
}

// New returns a local adapter for cfg. Invalid settings are reported as
// an *paddock.InvalidError. On Windows it answers paddock.ErrNotSupported:
// the adapter needs a Unix system (on Linux it isolates sandboxes with
// namespaces; elsewhere they run unisolated).
func New(cfg Config) (*Adapter, error) {
	if unsupportedSystem != "" {
		return nil, fmt.Errorf("local: %w: %s", paddock.ErrNotSupported, unsupportedSystem)
	}
	cfg.Isolation = cmp.Or(cfg.Isolation, IsolationAuto)
	switch cfg.Isolation {
	case IsolationAuto, IsolationNamespaces, IsolationNone:
	default:
		return nil, &paddock.InvalidError{Detail: "local: unknown isolation " + string(cfg.Isolation)}
	}
	grace := DefaultExitGrace
	if cfg.ExitGrace != nil {
		grace = *cfg.ExitGrace
	}
	a := &Adapter{
		root: cfg.Root, log: cfg.Logger, isolation: cfg.Isolation,
		processLimit: cmp.Or(cfg.ProcessLimit, DefaultProcessLimit), fileLimit: cmp.Or(cfg.FileSizeLimit, DefaultFileSizeLimit),
		keepFinished: cmp.Or(cfg.FinishedSessions, DefaultFinishedSessions), journalLimit: cmp.Or(cfg.SessionOutputLimit, DefaultSessionOutputLimit),
		drain:      drain.Policy{Grace: grace, Limit: cmp.Or(cfg.DrainLimit, DefaultDrainLimit), Unseen: cmp.Or(cfg.DrainUnseen, drain.DefaultUnseen)},
		execLimits: cfg.Exec, maxAge: cfg.MaxAge, initProgram: cfg.InitProgram, previewBase: cfg.PreviewBaseURL, previewKey: cfg.PreviewKey,
		sessions: map[string]*session{}, machines: map[string]*machine{}, creating: map[string]bool{},
	}
	if cfg.unkillable {
		a.drain.Kill = func(int, drain.Object) error { return nil }
		a.noCgroups = true // a cgroup's kill would not reach it either
	}
	if a.processLimit < 0 || a.fileLimit < 0 || a.keepFinished < 0 || a.drain.Limit < 0 || a.drain.Unseen < 0 || a.journalLimit < 0 || a.maxAge < 0 {
		return nil, &paddock.InvalidError{Detail: "local: limits must not be negative"}
	}
	if err := a.execLimits.Validate(); err != nil {
		return nil, err
	}
	gateConfig, err := cfg.Egress.Config(paddock.ProviderLocal, a.log)
	if err != nil {
		return nil, err
	}
	a.gateConfig = gateConfig
	if a.drain.Grace < 0 {
		return nil, &paddock.InvalidError{Detail: "local: the exit grace must not be negative"}
	}
	checkpointLimits, err := cfg.Checkpoints.WithDefaults()
	if err != nil {
		return nil, &paddock.InvalidError{Detail: "local: " + err.Error()}
	}
	if cfg.TempRoot && a.root != "" {
		return nil, &paddock.InvalidError{Detail: "local: TempRoot and Root are exclusive"}
	}
	if !cfg.TempRoot {
		if a.root, err = filepath.Abs(cmp.Or(a.root, defaultRoot())); err != nil {
			return nil, &paddock.InvalidError{Detail: "local: root: " + err.Error()}
		}
	}
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
	if cfg.TempRoot { // made last: no later refusal leaves it behind
		if a.root, err = os.MkdirTemp("", "paddock-local-"); err != nil {
			return nil, &paddock.UnavailableError{Detail: "local: temporary root: " + err.Error()}
		}
		a.removeRoot = true
	}
	if a.checkpoints, err = cpstore.New(filepath.Join(a.root, checkpointsDir), checkpointLimits, a.log); err != nil {
		return nil, err
	}
	return a, nil
}
