package conformance

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/heavy"
)

// Config says what to test and how.
type Config struct {
	// Adapter is the adapter under test. It may be a provider adapter, or
	// the runtime seen through the Adapter interface: the suite only uses
	// the contract.
	Adapter paddock.Adapter
	// Fixtures are the commands the cases run (FakeFixtures, ShellFixtures,
	// or your own).
	Fixtures Fixtures
	// Name mints a fresh sandbox name; nil = "conformance-<run>-<n>".
	Name func() string
	// FrameTimeout bounds each wait for one stream event; 0 = 30s (the
	// live suites use 60s). It bounds a hang and never decides a verdict:
	// a loaded machine that delivers late still passes.
	FrameTimeout time.Duration
	// OperationTimeout bounds each other call; 0 = 2 minutes.
	OperationTimeout time.Duration
	// SpawnOptions are merged into every spawn (E2B needs Detachable); the
	// suite's own Stdin and Name override them.
	SpawnOptions paddock.SpawnOpts
	// UnknownSessionStates says the adapter's listings cannot tell where a
	// session is and leave Session.State empty; case 35 then requires that
	// no listing claims a state.
	UnknownSessionStates bool
	// PreviewProbe, if set, reports whether a preview's URL accepts its
	// token right now (an HTTP request, or a check the adapter offers). The
	// expose case uses it to prove that revocation works.
	PreviewProbe func(ctx context.Context, p paddock.Preview) (bool, error)
	// Load sizes the load case (many agent turns at once).
	Load Load
	// Egress, when set, makes case 19 prove that an applied policy is
	// enforced, not only accepted (see EgressProbe).
	Egress *EgressProbe
	// Cases, when not empty, runs only the cases whose numbers it lists
	// ("20", "26", "18f"): a second run under a setting that changes only
	// those cases' promises need not repeat the others.
	Cases []string
	// Except leaves out the cases whose numbers it lists, for a run whose
	// promises another run proves: the load case of an adapter whose
	// RunRuntime runs it too ("24"), since the runtime calls the adapter's
	// every operation the way the raw case does.
	Except []string

	// streamsOnly runs only the cases about streams, but the load case:
	// RunRuntime's pass with actor owners.
	streamsOnly bool
	// loadAdapter, when set, is what the load case runs against in place
	// of Adapter: RunRuntime's channel pass mixes both kinds of owner.
	loadAdapter paddock.Adapter
	// envCases is CasesEnv's list, when set.
	envCases []string
}

// Defaults of Load.
const (
	// DefaultLoadTurns is sized for a 2-core machine: enough concurrent
	// turns that readers which are not scheduled in time, or a timer that
	// decides output is complete, show up as lost bytes.
	DefaultLoadTurns = 500
	// DefaultLoadTimeout bounds a whole load run.
	DefaultLoadTimeout = 5 * time.Minute
	// LoadTurnsEnv, when set to a positive number in the environment,
	// sizes every load case in place of Load.Turns: a quicker run on a
	// small machine, or a harder one.
	LoadTurnsEnv = "PADDOCK_LOAD_TURNS"
	// CasesEnv, when set in the environment to case numbers separated by
	// commas ("24", "17,18f"), narrows every run to those of its cases: one
	// case across every adapter, as CI runs the load cases at full size.
	CasesEnv = "PADDOCK_CASES"
)

// Load sizes the load case. Each turn creates its own sandbox, runs
// Fixtures.ExecBulk and Fixtures.SpawnBulk, checks their exact bytes and
// the one terminal event, and destroys the sandbox; all turns run at once.
type Load struct {
	// Turns is how many turns run concurrently; 0 = DefaultLoadTurns.
	// Live runs against a real provider lower it to what the account
	// allows. Built with the race detector the case runs an eighth of it
	// (its cost is per instrumented access, while the interleavings it
	// checks need only many turns at once); CI runs the load cases at full
	// size without it. LoadTurnsEnv overrides both.
	Turns int
	// Timeout bounds the whole run; 0 = DefaultLoadTimeout.
	Timeout time.Duration
}

// ExecFixture is a command that prints Expect (as a substring of its
// stdout) and exits 0.
type ExecFixture struct {
	Cmd    paddock.Cmd
	Expect string
}

// ExecFailFixture is a command that exits with the nonzero Code.
type ExecFailFixture struct {
	Cmd  paddock.Cmd
	Code int
}

// ExecSplitFixture is a command that prints Stdout on stdout, then Stderr
// on stderr, and exits with Code.
type ExecSplitFixture struct {
	Cmd            paddock.Cmd
	Stdout, Stderr string
	Code           int
}

// BulkFixture is a command whose stdout is exactly Output and which exits
// 0; its stderr is ignored.
type BulkFixture struct {
	Cmd    paddock.Cmd
	Output []byte
}

// Fixtures is the command vocabulary of the suite (docs/contract.md#conformance).
type Fixtures struct {
	ExecOK   ExecFixture
	ExecFail ExecFailFixture
	// ExecSplit writes to both stdout and stderr.
	ExecSplit ExecSplitFixture
	// SpawnOK prints some stdout and exits 0.
	SpawnOK paddock.Cmd
	// SpawnDrop prints, then its transport closes with no exit. Optional:
	// nil skips the case that needs it.
	SpawnDrop *paddock.Cmd
	// SpawnStay prints stdout, then echoes stdin as stdout until EOF, then
	// exits 0.
	SpawnStay paddock.Cmd
	// ExecBulk and SpawnBulk are what each turn of the load case runs,
	// through Exec and Spawn: some kilobytes, and more than a pipe holds.
	ExecBulk, SpawnBulk BulkFixture
	// SignalTrap (needed with the signal capability) prints "ready", then
	// "usr1" on each USR1 and keeps running; INT ends it with 130.
	SignalTrap paddock.Cmd
	// TermSize (needed with the resize capability) prints its terminal's
	// size as `stty size` does ("rows cols"), then again for each line of
	// stdin, until EOF.
	TermSize paddock.Cmd
	// Programs says the command names real programs, so that a missing
	// one, a file that is not executable and a directory can be tried
	// (case 34); false skips the case (the fake ignores the name).
	Programs bool
	// Endless are commands that print without end, one to stdout and one
	// to stderr: an Exec of each must stop at its output cap. Optional: nil
	// skips that part of case 28.
	Endless []paddock.Cmd
}

// FakeFixtures is the scripted vocabulary of the reference fake.
func FakeFixtures() Fixtures {
	drop := paddock.NewCmd("emit", "out:partial", "drop")
	return Fixtures{
		ExecOK:    ExecFixture{Cmd: paddock.NewCmd("emit", "out:hello"), Expect: "hello"},
		ExecFail:  ExecFailFixture{Cmd: paddock.NewCmd("emit", "out:oops", "exit:3"), Code: 3},
		ExecSplit: ExecSplitFixture{Cmd: paddock.NewCmd("emit", "out:to stdout", "err:to stderr", "exit:4"), Stdout: "to stdout", Stderr: "to stderr", Code: 4},
		SpawnOK:   paddock.NewCmd("emit", "out:hello", "exit:0"),
		SpawnDrop: &drop,
		SpawnStay: paddock.NewCmd("emit", "out:ready", "stay"),
		ExecBulk:  emitLines(1, 3000),
		SpawnBulk: emitLines(1, 20000),
	}
}

// emitLines is a fake script printing the numbers from..to, one per line,
// in chunks of 500 lines (one stdout event each).
func emitLines(from, to int) BulkFixture {
	const chunk = 500
	var args []string
	for n := from; n <= to; n += chunk {
		args = append(args, "out:"+string(numberLines(n, min(n+chunk-1, to))))
	}
	return BulkFixture{Cmd: paddock.NewCmd("emit", args...), Output: numberLines(from, to)}
}

// numberLines is what `seq from to` prints.
func numberLines(from, to int) []byte {
	var b []byte
	for n := from; n <= to; n++ {
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, '\n')
	}
	return b
}

// EgressProbe is what case 19 needs to watch a network policy at work:
// after the policy {Allow} a sandbox fetches Allowed (its output contains
// Body) and cannot fetch Denied; after the empty policy it cannot fetch
// Allowed either.
type EgressProbe struct {
	Allow           string // a domain rule that matches Allowed's host and not Denied's
	Allowed, Denied string // URLs
	Body            string // what Allowed's body contains
	Fetch           func(url string) paddock.Cmd
}

// CurlEgress is an EgressProbe whose fetch is curl through the sandbox's
// proxy settings, trusting caPEM (written beside the command first).
func CurlEgress(caPEM []byte, allow, allowed, denied, body string) *EgressProbe {
	return &EgressProbe{Allow: allow, Allowed: allowed, Denied: denied, Body: body, Fetch: func(url string) paddock.Cmd {
		cmd := paddock.NewCmd("sh", "-c", `printf '%s' "$CONFORMANCE_CA" > conformance-ca.pem && curl -sS --max-time 60 --cacert conformance-ca.pem "$0"`, url)
		cmd.Env = []paddock.EnvVar{{Name: "CONFORMANCE_CA", Value: string(caPEM)}}
		return cmd
	}}
}

// ShellFixtures is the vocabulary for any adapter with a POSIX shell.
func ShellFixtures() Fixtures {
	return Fixtures{
		ExecOK:     ExecFixture{Cmd: paddock.NewCmd("sh", "-c", "echo hello"), Expect: "hello"},
		ExecFail:   ExecFailFixture{Cmd: paddock.NewCmd("sh", "-c", "echo oops; exit 3"), Code: 3},
		ExecSplit:  ExecSplitFixture{Cmd: paddock.NewCmd("sh", "-c", "printf 'to stdout'; printf 'to stderr' >&2; exit 4"), Stdout: "to stdout", Stderr: "to stderr", Code: 4},
		SpawnOK:    paddock.NewCmd("sh", "-c", "echo hello"),
		SpawnStay:  paddock.NewCmd("sh", "-c", "echo ready; exec cat"),
		ExecBulk:   BulkFixture{Cmd: paddock.NewCmd("seq", "1", "3000"), Output: numberLines(1, 3000)},
		SpawnBulk:  BulkFixture{Cmd: paddock.NewCmd("seq", "1", "20000"), Output: numberLines(1, 20000)},
		SignalTrap: paddock.NewCmd("sh", "-c", `trap 'echo usr1' USR1; echo ready; while :; do sleep 0.05; done`),
		TermSize:   paddock.NewCmd("sh", "-c", `stty size; while read line; do stty size; done`),
		Programs:   true,
		Endless:    []paddock.Cmd{paddock.NewCmd("sh", "-c", "yes paddock-endless"), paddock.NewCmd("sh", "-c", "yes paddock-endless >&2")},
	}
}

// WrappedShellFixtures is ShellFixtures for an adapter that runs each
// command under a process of its own that reports its exit: its dropped
// command is WrapperDrop.
func WrappedShellFixtures() Fixtures {
	f := ShellFixtures()
	f.SpawnDrop = WrapperDrop()
	return f
}

// WrapperDrop is a SpawnDrop for adapters that run each command under a
// process of their own that reports its exit (a session runner, a journal
// wrapper, a subshell recording the code): it prints "partial", then kills
// its parent, that process, so no exit is ever reported, and lingers a
// second so its output pipes outlive the kill.
func WrapperDrop() *paddock.Cmd {
	drop := paddock.NewCmd("sh", "-c", "echo partial; kill -9 $PPID; sleep 1")
	return &drop
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.FrameTimeout <= 0 {
		c.FrameTimeout = 30 * time.Second
	}
	if c.OperationTimeout <= 0 {
		c.OperationTimeout = 2 * time.Minute
	}
	if c.Load.Turns <= 0 {
		c.Load.Turns = DefaultLoadTurns
	}
	c.Load.Turns = heavy.Volume(c.Load.Turns)
	if n, err := strconv.Atoi(os.Getenv(LoadTurnsEnv)); err == nil && n > 0 {
		c.Load.Turns = n
	}
	if env := os.Getenv(CasesEnv); env != "" {
		c.envCases = strings.Split(env, ",")
	}
	if c.Load.Timeout <= 0 {
		c.Load.Timeout = DefaultLoadTimeout
	}
	return c
}
