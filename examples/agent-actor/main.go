// Command agent-actor is an agent written as a hollywood actor that owns
// its sandbox through messages only: it sends package messages requests
// to the runtime's PID, receives the replies and its command's frames,
// grants credit as it consumes them, and reacts to the terminal frame.
// The first agent is stopped in the middle of the stream: its command is
// detached, not killed, and a second agent re-attaches and receives the
// whole output from byte zero, then the exit.
//
//	go run ./examples/agent-actor
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/messages"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agent-actor:", err)
		os.Exit(1)
	}
}

// lines is how much the agent's command prints: "line 1" to "line N",
// paced (30 pauses) so that the first agent, stopped at its first output,
// stops while the command still runs.
const lines = 3000

// script prints the lines, pausing every hundred.
var script = fmt.Sprintf(`i=0; while [ $i -lt %d ]; do i=$((i+1)); echo "line $i"; [ $((i %% 100)) = 0 ] && sleep 0.02; done; exit 0`, lines)

// report is what an agent tells the program that started it.
type report struct {
	session   string // once the command started
	streaming bool   // once the first output arrived
	stdout    string // every byte received, when the agent ends or is asked
	exit      *int32 // the exit code, when the terminal frame came
	err       error
}

// agent is the actor. With session "" it creates the sandbox and spawns
// the command; otherwise it attaches to that session.
type agent struct {
	runtime *actor.PID
	sandbox string
	session string
	credits *actors.Credits
	stdout  strings.Builder
	reports chan<- report
}

func (a *agent) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		c.Send(a.runtime, &messages.CreateRequest{Id: "create", Provider: string(paddock.ProviderLocal), Name: a.sandbox})
	case *messages.CreateReply:
		if m.GetFailure() != nil {
			a.reports <- report{err: fmt.Errorf("create: %s %s", m.GetFailure().GetKind(), m.GetFailure().GetDetail())}
			return
		}
		owner := messages.PidOf(c.PID()) // the frames come here
		if a.session == "" {
			c.Send(a.runtime, &messages.SpawnRequest{Id: "spawn", Handle: m.GetHandle(), Owner: owner, Detachable: true,
				Cmd: &messages.Cmd{Path: "sh", Args: []string{"-c", script}}})
			return
		}
		c.Send(a.runtime, &messages.AttachRequest{Id: "attach", Handle: m.GetHandle(), SessionId: a.session, Owner: owner})
	case *messages.SpawnReply:
		if m.GetFailure() != nil {
			a.reports <- report{err: fmt.Errorf("spawn: %s %s", m.GetFailure().GetKind(), m.GetFailure().GetDetail())}
			return
		}
		a.reports <- report{session: m.GetSessionId()}
	case *messages.AttachReply:
		if m.GetFailure() != nil {
			a.reports <- report{err: fmt.Errorf("attach: %s %s", m.GetFailure().GetKind(), m.GetFailure().GetDetail())}
		}
	case *messages.Stdout:
		if a.stdout.Len() == 0 {
			a.reports <- report{streaming: true}
		}
		a.stdout.Write(m.GetData())
		a.credits.Consumed(c, m) // without credit the command stops after one window
	case *messages.Exit:
		code := m.GetCode()
		a.credits.Consumed(c, m)
		a.reports <- report{stdout: a.stdout.String(), exit: &code}
	case *messages.Error:
		a.reports <- report{stdout: a.stdout.String(), err: fmt.Errorf("the command's fate is unknown: %s %s", m.GetReason(), m.GetDetail())}
	case actor.Stopped:
		a.reports <- report{stdout: a.stdout.String()} // what it had when it was stopped
	}
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
	next := func(reports <-chan report) (report, error) {
		select {
		case r := <-reports:
			return r, r.err
		case <-time.After(time.Minute):
			return report{}, fmt.Errorf("no word from the agent in a minute")
		case <-ctx.Done():
			return report{}, ctx.Err()
		}
	}

	// The first agent creates the sandbox, spawns the command and reads
	// its stream; it is stopped after the first few hundred lines.
	first := make(chan report, 4)
	pid := rt.Engine().Spawn(func() actor.Receiver {
		return &agent{runtime: rt.PID(), sandbox: "agent-box", credits: actors.NewCredits(rt.Window()), reports: first}
	}, "agent", actor.WithID("first"))
	started, err := next(first)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "the first agent spawned session", started.session != "")
	if _, err := next(first); err != nil { // its first output arrived
		return err
	}
	<-rt.Engine().Poison(pid).Done()
	partial, err := next(first)
	if err != nil {
		return err
	}
	want := expectedOutput()
	fmt.Fprintf(out, "the first agent was stopped mid-stream: %v (its bytes are a prefix: %v)\n",
		len(partial.stdout) < len(want), strings.HasPrefix(want, partial.stdout))

	// The command was detached, not killed: a second agent attaches to the
	// session and gets everything from byte zero, then the exit.
	second := make(chan report, 4)
	rt.Engine().Spawn(func() actor.Receiver {
		return &agent{runtime: rt.PID(), sandbox: "agent-box", session: started.session, credits: actors.NewCredits(rt.Window()), reports: second}
	}, "agent", actor.WithID("second"))
	var whole report
	for whole.exit == nil {
		if whole, err = next(second); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "the second agent re-attached: %d bytes of %d, identical: %v, exit %d\n",
		len(whole.stdout), len(want), whole.stdout == want, *whole.exit)
	return nil
}

// expectedOutput is what the command prints.
func expectedOutput() string {
	var b strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}
