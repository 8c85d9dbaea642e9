// Command embed is an orchestrator embedding Paddock's runtime from plain
// Go, on the embedded local provider (no account, daemon or network):
// create a sandbox, exec, spawn with live output and stdin, detach,
// re-attach with the replay from byte zero, terminate, destroy; errors
// handled by their kind.
//
//	go run ./examples/embed
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/local"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	// The local provider keeps its sandboxes under a root directory: here
	// a temporary one, removed by Close.
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

	// The runtime's Adapter is a paddock.Adapter like the local adapter
	// itself, but every call goes through the runtime's actors, which keep
	// the contract's promises whatever the adapter does.
	a := rt.Adapter(paddock.ProviderLocal)

	// Create is idempotent by name: a second call adopts the sandbox. A
	// transient failure (a provider's 503, a rate limit) is worth a retry;
	// WithBackoff retries only those.
	var h paddock.Handle
	err = paddock.WithBackoff(ctx, func(ctx context.Context) error {
		h, err = a.Create(ctx, "agent-1", paddock.CreateOpts{})
		return err
	}, paddock.BackoffOpts{Label: "create agent-1"})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "created %s/%s\n", h.Provider, h.Name)

	// Exec: run to completion. A nonzero exit is data, not an error.
	res, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", "echo hello; exit 3"), paddock.ExecOpts{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "exec: %q exit %d\n", res.Stdout, res.ExitCode)

	// An exec past its deadline is an *ExecTimeoutError (and the command
	// is stopped), told apart from other failures by its kind.
	_, err = a.Exec(ctx, h, paddock.NewCmd("sleep", "30"), paddock.ExecOpts{Timeout: paddock.Duration(200 * time.Millisecond)})
	var timeout *paddock.ExecTimeoutError
	fmt.Fprintln(out, "exec with a 200ms deadline timed out:", errors.As(err, &timeout), "transient:", paddock.IsTransient(err))

	// Spawn: a detachable session whose output streams as events. Its
	// stdin takes what the orchestrator writes.
	s, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", `echo ready; while read line; do echo "got $line"; done; echo bye; exit 7`),
		paddock.SpawnOpts{Stdin: true, Detachable: true})
	if err != nil {
		return err
	}
	session := s.SessionID()
	if err := expect(ctx, s, "ready\n"); err != nil {
		return err
	}
	if err := s.WriteStdin(ctx, []byte("one\n")); err != nil {
		return err
	}
	if err := expect(ctx, s, "got one\n"); err != nil {
		return err
	}
	fmt.Fprintln(out, "spawned session", session != "", "and it answered its stdin")

	// Detach: the orchestrator lets go; the command runs on.
	if err := s.Close(); err != nil {
		return err
	}
	sessions, err := a.ListSessions(ctx, h)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "detached; live sessions:", len(sessions))

	// Re-attach: the replay starts at byte zero, then the output goes on
	// live, and stdin is ours again.
	at, err := a.Attach(ctx, h, session, paddock.AttachOpts{Stdin: true})
	if err != nil {
		return err
	}
	if err := at.WriteStdin(ctx, []byte("two\n")); err != nil {
		return err
	}
	if err := at.CloseStdin(ctx); err != nil {
		return err
	}
	replay, code, err := collect(ctx, at)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "re-attached: %q, exit %d\n", replay, code)

	// Terminate a session that would run for ever: its terminal event
	// says how it ended (143 after SIGTERM).
	long, err := a.Spawn(ctx, h, paddock.NewCmd("sleep", "600"), paddock.SpawnOpts{Detachable: true})
	if err != nil {
		return err
	}
	if err := a.TerminateSession(ctx, h, long.SessionID(), paddock.TerminateOpts{}); err != nil {
		return err
	}
	_, code, err = collect(ctx, long)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "terminated: exit", code)

	// A session that is gone is not_found, by kind.
	_, err = a.Attach(ctx, h, "s-no-such-session", paddock.AttachOpts{})
	fmt.Fprintln(out, "attach to a missing session is not_found:", errors.Is(err, paddock.ErrNotFound))

	// Destroy takes the sandbox and everything in it; a second one is fine.
	if err := a.Destroy(ctx, h); err != nil {
		return err
	}
	if err := a.Destroy(ctx, h); err != nil {
		return err
	}
	_, err = a.Get(ctx, h)
	fmt.Fprintln(out, "destroyed; get is not_found:", errors.Is(err, paddock.ErrNotFound))
	return nil
}

// expect reads stdout events until want has arrived (and nothing else).
func expect(ctx context.Context, s paddock.Stream, want string) error {
	var got strings.Builder
	for got.Len() < len(want) {
		ev, err := s.Next(ctx)
		if err != nil {
			return fmt.Errorf("the stream ended before %q: %w", want, err)
		}
		switch ev.Kind {
		case paddock.EventStdout:
			got.Write(ev.Data)
		case paddock.EventExit, paddock.EventError:
			return fmt.Errorf("the command ended (%v %d %v) before %q", ev.Kind, ev.Code, ev.Err, want)
		}
	}
	if got.String() != want {
		return fmt.Errorf("got %q, want %q", got.String(), want)
	}
	return nil
}

// collect reads a stream to its terminal event: the stdout and the exit
// code; an error event (the command's fate is unknown) is an error.
func collect(ctx context.Context, s paddock.Stream) (string, int, error) {
	var stdout strings.Builder
	for {
		ev, err := s.Next(ctx)
		if err != nil {
			return stdout.String(), 0, fmt.Errorf("the stream ended without a terminal event: %w", err)
		}
		switch ev.Kind {
		case paddock.EventStdout:
			stdout.Write(ev.Data)
		case paddock.EventExit:
			return stdout.String(), ev.Code, nil
		case paddock.EventError:
			return stdout.String(), 0, ev.Err
		}
	}
}
