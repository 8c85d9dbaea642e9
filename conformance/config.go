package conformance

import (
	"context"
	"time"

	"github.com/paddockhq/paddock"
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
	// FrameTimeout bounds each wait for one stream event; 0 = 1s (real
	// providers need more: the live suites use 60s). Negative waits (that
	// nothing more arrives) last 50ms.
	FrameTimeout time.Duration
	// OperationTimeout bounds each other call; 0 = 30s.
	OperationTimeout time.Duration
	// SpawnOptions are merged into every spawn (E2B needs Detachable); the
	// suite's own Stdin and Name override them.
	SpawnOptions paddock.SpawnOpts
	// PreviewProbe, if set, reports whether a preview's URL accepts its
	// token right now (an HTTP request, or a check the adapter offers). The
	// expose case uses it to prove that revocation works.
	PreviewProbe func(ctx context.Context, p paddock.Preview) (bool, error)
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

// Fixtures is the command vocabulary of the suite (contract section 7).
type Fixtures struct {
	ExecOK   ExecFixture
	ExecFail ExecFailFixture
	// SpawnOK prints some stdout and exits 0.
	SpawnOK paddock.Cmd
	// SpawnDrop prints, then its transport closes with no exit. Optional:
	// nil skips the case that needs it.
	SpawnDrop *paddock.Cmd
	// SpawnStay prints stdout, then echoes stdin as stdout until EOF, then
	// exits 0.
	SpawnStay paddock.Cmd
}

// FakeFixtures is the scripted vocabulary of the reference fake.
func FakeFixtures() Fixtures {
	drop := paddock.NewCmd("emit", "out:partial", "drop")
	return Fixtures{
		ExecOK:    ExecFixture{Cmd: paddock.NewCmd("emit", "out:hello"), Expect: "hello"},
		ExecFail:  ExecFailFixture{Cmd: paddock.NewCmd("emit", "out:oops", "exit:3"), Code: 3},
		SpawnOK:   paddock.NewCmd("emit", "out:hello", "exit:0"),
		SpawnDrop: &drop,
		SpawnStay: paddock.NewCmd("emit", "out:ready", "stay"),
	}
}

// ShellFixtures is the vocabulary for any adapter with a POSIX shell.
func ShellFixtures() Fixtures {
	return Fixtures{
		ExecOK:    ExecFixture{Cmd: paddock.NewCmd("sh", "-c", "echo hello"), Expect: "hello"},
		ExecFail:  ExecFailFixture{Cmd: paddock.NewCmd("sh", "-c", "echo oops; exit 3"), Code: 3},
		SpawnOK:   paddock.NewCmd("sh", "-c", "echo hello"),
		SpawnStay: paddock.NewCmd("sh", "-c", "echo ready; exec cat"),
	}
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.FrameTimeout <= 0 {
		c.FrameTimeout = time.Second
	}
	if c.OperationTimeout <= 0 {
		c.OperationTimeout = 30 * time.Second
	}
	return c
}
