// Command branch shows an agent trying two approaches from one saved
// state and keeping the better, on the embedded local provider (no
// account, daemon or network): a sandbox is prepared, checkpointed, forked
// into a second sandbox, each branch takes its own approach, the better
// one is judged by a command's result, and the original is restored to
// the checkpoint before it takes the winning approach.
//
//	go run ./examples/branch
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/local"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "branch:", err)
		os.Exit(1)
	}
}

// approaches are the two ways the agent tries to fix the program: each a
// shell script run in the program's directory.
var approaches = map[string]string{
	"patch": `sed -i 's/a - b/a + b/' add.sh`,
	"guess": `echo 'echo 42' > add.sh`,
}

func run(ctx context.Context, out io.Writer) error {
	adapter, err := local.New(local.Config{TempRoot: true})
	if err != nil {
		return err
	}
	defer adapter.Close()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderLocal: adapter}})
	if err != nil {
		return err
	}
	defer rt.Close()
	a := rt.Adapter(paddock.ProviderLocal)

	// The starting point: a small program with a bug, and its test.
	h, err := a.Create(ctx, "task", paddock.CreateOpts{})
	if err != nil {
		return err
	}
	defer a.Destroy(context.WithoutCancel(ctx), h)
	for path, body := range map[string]string{
		"/app/add.sh":  "a=$1 b=$2\necho $((a - b))\n",
		"/app/test.sh": "for c in '1 2 3' '2 2 4' '10 5 15'; do set -- $c; [ \"$(sh add.sh $1 $2)\" = $3 ] || exit 1; done\n",
	} {
		if err := a.WriteFile(ctx, h, path, 0o644, strings.NewReader(body)); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "the test fails at first:", score(ctx, a, h) != 0)

	// Save the state, and branch: the fork is a second sandbox holding
	// the same files.
	saved, err := paddock.CreateCheckpoint(ctx, a, h, paddock.CheckpointOpts{Comment: "before trying"})
	if err != nil {
		return err
	}
	fork, err := paddock.Fork(ctx, a, h, saved, "task-guess", paddock.ForkOpts{})
	if err != nil {
		return err
	}
	defer a.Destroy(context.WithoutCancel(ctx), fork)

	// Each branch takes its own approach; the test judges.
	results := map[string]int{}
	for _, b := range []struct {
		name string
		h    paddock.Handle
	}{{"patch", h}, {"guess", fork}} {
		if _, err := exec(ctx, a, b.h, approaches[b.name]); err != nil {
			return err
		}
		results[b.name] = score(ctx, a, b.h)
		fmt.Fprintf(out, "%s in %s: test exit %d\n", b.name, b.h.Name, results[b.name])
	}
	best := "patch"
	if results["guess"] == 0 && results["patch"] != 0 {
		best = "guess"
	}
	fmt.Fprintln(out, "keeping:", best)

	// Back to the saved state, then the winning approach only: the other
	// branch's changes never touched this sandbox, and its own are undone.
	if err := paddock.RestoreCheckpoint(ctx, a, h, saved); err != nil {
		return err
	}
	fixed, err := exec(ctx, a, h, "cat add.sh")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "restored: %q\n", fixed)
	if _, err := exec(ctx, a, h, approaches[best]); err != nil {
		return err
	}
	fmt.Fprintln(out, "the test passes now:", score(ctx, a, h) == 0)
	return nil
}

// exec runs a shell script in the program's directory and returns its
// output; a failure to run it is an error, its exit code is not.
func exec(ctx context.Context, a paddock.Adapter, h paddock.Handle, script string) (string, error) {
	cmd := paddock.NewCmd("sh", "-c", script)
	cmd.Dir = "/app"
	res, err := a.Exec(ctx, h, cmd, paddock.ExecOpts{StderrToStdout: true})
	return string(res.Stdout), err
}

// score is the test's exit code (0: it passes; -1: it could not run).
func score(ctx context.Context, a paddock.Adapter, h paddock.Handle) int {
	cmd := paddock.NewCmd("sh", "test.sh")
	cmd.Dir = "/app"
	res, err := a.Exec(ctx, h, cmd, paddock.ExecOpts{})
	if err != nil {
		return -1
	}
	return res.ExitCode
}
