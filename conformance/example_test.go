package conformance_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/conformance"
	"github.com/paddockhq/paddock/fake"
)

// The whole suite is one call from an adapter's own test.
func Example() {
	_ = func(t *testing.T) {
		a := fake.New()
		t.Cleanup(a.Reset)
		conformance.Run(t, conformance.Config{Adapter: a, Fixtures: conformance.FakeFixtures()})
	}
}

// An adapter of processes runs the suite on the shell fixtures, with the
// timeouts a real provider needs; the preview probe fetches each preview
// over HTTP.
func ExampleRun() {
	_ = func(t *testing.T) {
		a, err := local.New(local.Config{Root: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Close() })
		conformance.Run(t, conformance.Config{Adapter: a, Fixtures: conformance.ShellFixtures(),
			FrameTimeout: 5 * time.Second, OperationTimeout: time.Minute, Load: conformance.Load{Turns: 50}})
	}
}

// The same promises hold through the actor runtime: the suite drives the
// adapter by the runtime's facade and by messages to its PID.
func ExampleRunRuntime() {
	_ = func(t *testing.T) {
		rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: fake.New()}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
		conformance.RunRuntime(t, rt, paddock.ProviderFake, conformance.Config{Fixtures: conformance.FakeFixtures()})
	}
}

// The shell fixtures are plain POSIX sh commands, for any adapter whose
// sandboxes have a shell.
func ExampleShellFixtures() {
	f := conformance.ShellFixtures()
	fmt.Println(f.ExecOK.Cmd.Path, f.ExecFail.Code)
	// Output: sh 3
}
