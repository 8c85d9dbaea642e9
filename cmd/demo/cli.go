package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/rs/zerolog"
)

// Exit codes of the CLI besides the command's own.
const (
	exitUsage = 2   // bad flags or arguments
	exitError = 125 // the command's fate is unknown (an error frame), or an operation failed
)

// run is the whole program: it returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help", "help":
			usage(stdout)
			return 0
		}
		if !strings.HasPrefix(args[0], "-") {
			cmd, args = args[0], args[1:]
		}
	}
	switch cmd {
	case "serve":
		return serveCommand(ctx, args, stdout, stderr)
	case "run", "sessions", "attach", "terminate":
		return cliCommand(ctx, cmd, args, stdin, stdout, stderr)
	}
	fmt.Fprintf(stderr, "demo: unknown command %q (serve, run, sessions, attach, terminate; demo -h says more)\n", cmd)
	return exitUsage
}

// parseFlags parses args into fs: -h prints the command's usage to
// stdout (exit 0); a bad flag prints it to stderr (exit 2).
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (code int, ok bool) {
	stderr := fs.Output()
	fs.Usage = func() {} // printed below, where it belongs
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		commandUsage(stdout, fs)
		return 0, false
	case err != nil:
		commandUsage(stderr, fs)
		return exitUsage, false
	}
	return 0, true
}

// cliOptions are the flags every CLI command takes.
type cliOptions struct {
	provider string
	sandbox  string
	root     string
	force    bool
	timeout  time.Duration
}

// cliFlags are the flags of a CLI command.
func cliFlags(cmd string) (*flag.FlagSet, *cliOptions) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	var o cliOptions
	fs.StringVar(&o.provider, "provider", "local", "provider to use")
	fs.StringVar(&o.sandbox, "sandbox", "demo", "sandbox name (created if missing)")
	fs.StringVar(&o.root, "root", "", "local provider root (default: the user's cache directory)")
	if cmd == "terminate" {
		fs.BoolVar(&o.force, "force", false, "SIGKILL at once instead of SIGTERM first")
		fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "graceful stop allowance")
	}
	return fs, &o
}

func cliCommand(ctx context.Context, cmd string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, o := cliFlags(cmd)
	fs.SetOutput(stderr)
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	rest := fs.Args()
	rt, _, stop, err := startRuntime(o.root, zerolog.Nop(), nil)
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return exitError
	}
	defer stop()
	a := rt.Adapter(paddock.Provider(o.provider))
	h, err := a.Create(ctx, o.sandbox, paddock.CreateOpts{})
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return exitError
	}
	h.Provider = a.Provider()
	switch cmd {
	case "run":
		if len(rest) == 0 {
			fmt.Fprintln(stderr, "usage: demo run [-provider P] [-sandbox NAME] -- CMD ARGS...")
			return exitUsage
		}
		s, err := a.Spawn(ctx, h, paddock.NewCmd(rest[0], rest[1:]...), paddock.SpawnOpts{Stdin: true, Detachable: true})
		if err != nil {
			fmt.Fprintln(stderr, "demo:", err)
			return exitError
		}
		go forwardStdin(ctx, s, stdin)
		code := follow(ctx, s, stdout, stderr)
		if ctx.Err() != nil {
			stopInterrupted(a, h, s.SessionID(), stderr)
		}
		return code
	case "sessions":
		return listSessions(ctx, a, h, stdout, stderr)
	case "attach":
		if len(rest) != 1 {
			fmt.Fprintln(stderr, "usage: demo attach [-provider P] [-sandbox NAME] SESSION")
			return exitUsage
		}
		s, err := a.Attach(ctx, h, rest[0], paddock.AttachOpts{Stdin: true})
		if err != nil {
			fmt.Fprintln(stderr, "demo:", err)
			return exitError
		}
		go forwardStdin(ctx, s, stdin)
		return follow(ctx, s, stdout, stderr)
	default: // terminate
		if len(rest) != 1 {
			fmt.Fprintln(stderr, "usage: demo terminate [-force] [-timeout D] SESSION")
			return exitUsage
		}
		mode := paddock.TerminateGraceful
		if o.force {
			mode = paddock.TerminateForce
		}
		if err := a.TerminateSession(ctx, h, rest[0], paddock.TerminateOpts{Timeout: paddock.Duration(o.timeout.Truncate(time.Millisecond)), Mode: mode}); err != nil {
			fmt.Fprintln(stderr, "demo:", err)
			return exitError
		}
		fmt.Fprintln(stdout, "terminated", rest[0])
		return 0
	}
}

// follow copies a stream's output to the terminal and returns the exit code
// it ended with; an error event (unknown fate) is 125, its reason on stderr.
func follow(ctx context.Context, s paddock.Stream, stdout, stderr io.Writer) int {
	for {
		ev, err := s.Next(ctx)
		switch {
		case ctx.Err() != nil:
			_ = s.Close() // detach; run then stops the session, attach leaves it running
			fmt.Fprintf(stderr, "demo: detached from session %s\n", s.SessionID())
			return 130
		case err != nil:
			fmt.Fprintln(stderr, "demo: the stream ended without a terminal event")
			return exitError
		}
		switch ev.Kind {
		case paddock.EventStdout:
			_, _ = stdout.Write(ev.Data)
		case paddock.EventStderr:
			_, _ = stderr.Write(ev.Data)
		case paddock.EventExit:
			return ev.Code
		case paddock.EventError:
			fmt.Fprintf(stderr, "demo: %v\n", ev.Err)
			return exitError
		}
	}
}

// stopInterrupted stops the session of an interrupted run, as Ctrl-C
// stops a command run in a shell's foreground: one behaviour on every
// provider (a local session would end with this process anyway, a docker
// or hosted one would run on unseen).
func stopInterrupted(a paddock.Adapter, h paddock.Handle, session string, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), interruptStopWait)
	defer cancel()
	if err := paddock.TerminateSession(ctx, a, h, session, paddock.TerminateOpts{}); err != nil {
		fmt.Fprintf(stderr, "demo: stopping session %s: %v\n", session, err)
		return
	}
	fmt.Fprintf(stderr, "demo: interrupted: session %s stopped\n", session)
}

// interruptStopWait bounds the stop of an interrupted run's session.
const interruptStopWait = 30 * time.Second

// forwardStdin writes our stdin to the command, then closes its stdin.
func forwardStdin(ctx context.Context, s paddock.Stream, stdin io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := stdin.Read(buf)
		if n > 0 {
			if werr := s.WriteStdin(ctx, buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				_ = s.CloseStdin(ctx)
			}
			return
		}
	}
}

func listSessions(ctx context.Context, a paddock.Adapter, h paddock.Handle, stdout, stderr io.Writer) int {
	sessions, err := a.ListSessions(ctx, h)
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return exitError
	}
	for _, s := range sessions {
		fmt.Fprintf(stdout, "%s\t%s\t%s\n", s.ID, s.CreatedAt.Format(time.RFC3339), s.Command)
	}
	return 0
}
