package actors

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/admission"
	"github.com/paddockhq/paddock/internal/procid"
	"github.com/paddockhq/paddock/internal/telemetry"
	"github.com/paddockhq/paddock/supervisor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
)

// Defaults of Config.
const (
	DefaultWindow       = 64
	DefaultName         = "default"
	DefaultFinishedRefs = 4096
	commandInbox        = 4 // inboxes start small and grow (docs/contract.md#runtime)
)

// Config configures a Runtime. The zero value of each field takes its
// default; Adapters is required.
type Config struct {
	// Adapters maps each provider to its adapter; the whole map, never
	// merged with a default.
	Adapters paddock.Registry
	// Logger receives the runtime's structured logs; the zero Logger is
	// silent.
	Logger zerolog.Logger
	// Engine embeds the runtime in the caller's hollywood engine; nil = a
	// local engine of its own.
	Engine *actor.Engine
	// Name names the root actor, paddock/<Name>; two runtimes on one engine
	// need different names. Default "default".
	Name string
	// Window is how many output frames a command sends before its owner
	// grants credit. Default 64.
	Window int
	// Clock is the time source of exec deadlines and heartbeats; nil = the
	// system clock.
	Clock paddock.Clock
	// FinishedRefs is how many finished commands the runtime remembers, to
	// answer late stdin and stop calls precisely, and how many stream
	// openings by owners on other nodes, to answer a repeat with the first
	// reply. Default 4096.
	FinishedRefs int
	// ReapInterval is how often the runtime runs the Reap of each adapter
	// that has one (enforcing idle timeouts and maximum ages, removing
	// orphans). 0 = one minute; negative = never (call Reap yourself).
	ReapInterval time.Duration
	// Metrics registers the runtime's metrics (live sandboxes and
	// commands, frames and bytes, operation latency and errors, commands
	// waiting for credit, journal bytes, reaper actions; README lists
	// them); nil = none.
	Metrics prometheus.Registerer
	// Tracer makes a span per operation, parented on the caller's context
	// when the call came through the Runtime's methods; nil = none.
	Tracer trace.TracerProvider
	// Admission limits providers' live sandboxes and concurrent creates,
	// and backs a provider off after it answered rate_limited; a provider
	// without an entry is not limited.
	Admission map[paddock.Provider]Admission
	// Identity names this runtime as the owner of the sandboxes it holds
	// (docs/contract.md#leases): a runtime started with the identity of one
	// that crashed adopts its sandboxes. "" = this process
	// (host/pid/start time), which no later runtime shares.
	Identity string
	// Lease is how long a sandbox stays held after the runtime's last
	// renewal: it renews every held sandbox's lease every third of it, on
	// adapters that keep leases, and once it stops (or crashes) any
	// runtime's Reap may destroy the sandbox after the lease. 0 =
	// DefaultLease (2 minutes); negative = no leases.
	Lease time.Duration
	// RemoteLease is how long a command whose owner is on another node
	// waits for a word from it (the owner credits at least every fifth of
	// it) before it detaches (docs/contract.md#remote). Every node of a
	// deployment needs the same. 0 = DefaultRemoteLease (30 s).
	RemoteLease time.Duration
	// LinkWindow bounds the bytes of output frames in flight to one other
	// node, all its subscriptions together: a frame waits for room before
	// it is sent, and its bytes come back when its owner credits it.
	// 0 = DefaultLinkWindow (16 MiB).
	LinkWindow int
	// CloseTimeout is how long Close lets Shutdown take; 0 =
	// DefaultCloseTimeout (30s).
	CloseTimeout time.Duration
	// WriteSettle is how long a WriteFile whose caller's context ended
	// waits for the adapter's answer (its write is cancelled too), so the
	// caller learns whether the write landed; past it the answer is the
	// context's end, unavailable: the outcome unknown. 0 =
	// DefaultWriteSettle (10 s).
	WriteSettle time.Duration
}

// JournalSizer is implemented by adapters that keep session journals the
// runtime can count (the local adapter): the bytes they hold now.
type JournalSizer interface {
	JournalBytes() int64
}

// Runtime is a running Paddock: a root actor on a hollywood engine with a
// sandbox actor per handle and a command actor per spawned or attached
// command. Every method is safe for concurrent use; blocking calls take a
// context and return taxonomy errors wrapped in *paddock.OpError.
type Runtime struct {
	cfg     Config
	engine  *actor.Engine
	root    *actor.PID
	replies *replyBox
	log     zerolog.Logger

	refPrefix string
	nextID    atomic.Uint64

	opsCtx    context.Context // ends provider calls, readers, writers and timers
	opsCancel context.CancelFunc
	wg        sync.WaitGroup // every goroutine of the runtime's own (not the streams' pumps)
	running   sync.Map       // id -> what each such goroutine does, for Shutdown to name
	sinks     sync.Map       // stream owner PID ID -> *streamSink, live plain-Go streams
	links     sync.Map       // other node's address -> *linkWindow

	stopping     atomic.Bool
	stopCtx      atomic.Pointer[context.Context] // Shutdown's context, for the root's final wait
	stopped      chan struct{}
	actorsDone   chan struct{} // closed once the root's actors have stopped
	shutdownOnce sync.Once
	shutdownErr  error

	tel     *telemetry.Telemetry                 // nil: no metrics or traces
	callers sync.Map                             // request id -> the caller's context, while tracing or limiting
	gates   map[paddock.Provider]*admission.Gate // read-only after Start

	leases leases // the sandboxes this runtime holds

	observeBeat func(sandbox, event string) // tests: each heartbeat tick's decision (idle, sent) and each beat's end (done)
}

// Start validates cfg and starts a runtime.
func Start(cfg Config) (*Runtime, error) {
	if len(cfg.Adapters.Providers()) == 0 {
		return nil, &paddock.InvalidError{Detail: "runtime config: no adapters"}
	}
	if cfg.Window < 0 || cfg.FinishedRefs < 0 || cfg.RemoteLease < 0 || cfg.LinkWindow < 0 || cfg.CloseTimeout < 0 || cfg.WriteSettle < 0 {
		return nil, &paddock.InvalidError{Detail: "runtime config: negative window, finished-ref count, remote lease, link window or close timeout"}
	}
	cfg.CloseTimeout = cmp.Or(cfg.CloseTimeout, DefaultCloseTimeout)
	cfg.WriteSettle = cmp.Or(cfg.WriteSettle, DefaultWriteSettle)
	cfg.RemoteLease = cmp.Or(cfg.RemoteLease, DefaultRemoteLease)
	cfg.LinkWindow = cmp.Or(cfg.LinkWindow, DefaultLinkWindow)
	if cfg.LinkWindow < RemoteFrameMax {
		return nil, &paddock.InvalidError{Detail: "runtime config: a link window smaller than one frame"}
	}
	cfg.Window = cmp.Or(cfg.Window, DefaultWindow)
	cfg.FinishedRefs = cmp.Or(cfg.FinishedRefs, DefaultFinishedRefs)
	cfg.Name = cmp.Or(cfg.Name, DefaultName)
	if cfg.Identity == "" {
		cfg.Identity = procid.Self()
	}
	cfg.Lease = cmp.Or(cfg.Lease, DefaultLease)
	journals := map[paddock.Provider]func() int64{}
	for _, p := range cfg.Adapters.Providers() {
		if a, _ := cfg.Adapters.Lookup(p); a != nil {
			if j, ok := a.(JournalSizer); ok {
				journals[p] = j.JournalBytes
			}
		}
	}
	gates, err := newGates(cfg)
	if err != nil {
		return nil, err
	}
	tel, err := telemetry.New(telemetry.Config{Registerer: cfg.Metrics, Tracer: cfg.Tracer, Journals: journals})
	if err != nil {
		return nil, err
	}
	e := cfg.Engine
	if e == nil {
		if e, err = actor.NewEngine(actor.NewEngineConfig()); err != nil {
			return nil, &paddock.UnavailableError{Detail: "starting the actor engine: " + err.Error()}
		}
	}
	if e.Registry.GetPID(rootKind, cfg.Name) != nil {
		return nil, &paddock.InvalidError{Detail: fmt.Sprintf("a runtime named %q already runs on this engine", cfg.Name)}
	}
	rt := &Runtime{
		cfg: cfg, engine: e, log: cfg.Logger.With().Str("runtime", cfg.Name).Logger(),
		refPrefix: randomPrefix(), stopped: make(chan struct{}), actorsDone: make(chan struct{}), tel: tel, gates: gates,
	}
	rt.opsCtx, rt.opsCancel = context.WithCancel(context.Background())
	rt.replies = newReplyBox(actor.NewPID(e.Address(), repliesKind+"/"+cfg.Name))
	e.SpawnProc(rt.replies)
	rt.root = e.Spawn(newRoot(rt), rootKind, append(rt.actorOpts(), actor.WithID(cfg.Name))...)
	cfg.ReapInterval = cmp.Or(cfg.ReapInterval, DefaultReapInterval)
	if cfg.ReapInterval > 0 {
		rt.startReapers(cfg.ReapInterval)
	}
	rt.startLeases()
	rt.log.Debug().Str("root", rt.root.ID).Msg("runtime started")
	return rt, nil
}

// Actor kinds of the runtime's top-level processes.
const (
	rootKind    = "paddock"
	repliesKind = "paddock-replies"
	streamKind  = "paddock-stream"
)

// actorOpts are the options every runtime actor carries: the recover
// middleware, and no reliance on hollywood's restarts.
func (rt *Runtime) actorOpts() []actor.OptFunc {
	return []actor.OptFunc{actor.WithMiddleware(supervisor.Recover(rt.log)), actor.WithMaxRestarts(0)}
}

// PID is the root actor: send it any request of package messages.
func (rt *Runtime) PID() *actor.PID { return rt.root }

// Engine is the hollywood engine the runtime runs on.
func (rt *Runtime) Engine() *actor.Engine { return rt.engine }

// Window is the default flow-control window of commands.
func (rt *Runtime) Window() int { return rt.cfg.Window }

// newID returns a process-unique id for a request or a command ref.
func (rt *Runtime) newID() string {
	return rt.refPrefix + "-" + strconv.FormatUint(rt.nextID.Add(1), 10)
}

// randomPrefix keeps refs of different runtimes (and runs) apart.
func randomPrefix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// goTracked runs f on a goroutine that Shutdown waits for; what says
// what it does, for a Shutdown that has to abandon it.
func (rt *Runtime) goTracked(what string, f func()) {
	id := rt.nextID.Add(1)
	rt.running.Store(id, what)
	rt.wg.Add(1)
	go func() {
		defer rt.wg.Done()
		defer rt.running.Delete(id)
		f()
	}()
}

// stillRunning names the runtime's goroutines still running (at most
// maxNamed of them, then a count).
func (rt *Runtime) stillRunning() string {
	const maxNamed = 8
	var names []string
	n := 0
	rt.running.Range(func(_, v any) bool {
		if n++; n <= maxNamed {
			names = append(names, v.(string))
		}
		return true
	})
	sort.Strings(names)
	if n > maxNamed {
		names = append(names, fmt.Sprintf("and %d more", n-maxNamed))
	}
	return strings.Join(names, "; ")
}

// Shutdown stops the runtime within ctx: every live command's subscribers
// receive exactly one terminal frame (Error{stopped_before_exit} where no
// exit was seen) after all they were owed, in-flight provider calls are
// cancelled, and the runtime's own goroutines are waited for. It never
// waits for a plain-Go subscriber to read: a FrameStream keeps what it was
// owed after Shutdown, so read it to its end or Close it. If ctx ends
// first, Shutdown returns at once with an unavailable error naming what it
// abandoned (an adapter call or stream that ignores cancellation). Remote
// processes of detachable commands keep running. Later calls return the
// first result.
func (rt *Runtime) Shutdown(ctx context.Context) error {
	rt.shutdownOnce.Do(func() { rt.shutdownErr = rt.shutdown(ctx) })
	return rt.shutdownErr
}

// DefaultWriteSettle is how long a cancelled WriteFile waits for the
// adapter's answer by default.
const DefaultWriteSettle = 10 * time.Second

// DefaultCloseTimeout is how long Close lets Shutdown take by default.
const DefaultCloseTimeout = 30 * time.Second

// Close is Shutdown within Config.CloseTimeout, for a defer.
func (rt *Runtime) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), rt.cfg.CloseTimeout)
	defer cancel()
	return rt.Shutdown(ctx)
}

// shutdownCtx is the context Shutdown was given (Background before).
func (rt *Runtime) shutdownCtx() context.Context {
	if c := rt.stopCtx.Load(); c != nil {
		return *c
	}
	return context.Background()
}

func (rt *Runtime) shutdown(ctx context.Context) error {
	rt.stopCtx.Store(&ctx)
	rt.stopping.Store(true)
	<-rt.engine.PoisonCtx(ctx, rt.root).Done()
	select { // every command's terminal frame is sent before its actor stops
	case <-rt.actorsDone:
	case <-ctx.Done():
	}
	rt.opsCancel()
	rt.sinks.Range(func(_, v any) bool { // streams whose command was abandoned end here
		v.(*streamSink).close()
		return true
	})
	done := make(chan struct{})
	go func() { rt.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = &paddock.UnavailableError{Detail: "shutdown: " + ctx.Err().Error() + "; abandoned: " + rt.stillRunning()}
	}
	rt.engine.Registry.Remove(rt.replies.PID())
	close(rt.stopped)
	rt.log.Debug().Err(err).Msg("runtime stopped")
	return err
}
