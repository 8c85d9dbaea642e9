package e2b

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b/envd/processpb"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// killTimeout bounds the SIGKILL a closing stream sends.
const killTimeout = 10 * time.Second

// stream is one process followed over envd: its events become stream
// events, and stdin goes to its pid. The request carrying it has no
// deadline (envd would take one for the process's lifetime); Next's
// context, Close and the adapter's calls end it instead.
type stream struct {
	process
	ending
	session string
	recv    func() (*processpb.ProcessEvent, bool)
	err     func() error
	close   func() error
	cancel  context.CancelFunc
	kill    bool // Close kills the process (it is not detachable)
}

// process is one process of a sandbox, addressed by its pid; on a
// terminal (tty), its input goes to the terminal.
type process struct {
	a       *Adapter
	sandbox string
	pid     uint32
	tty     bool
}

// ending is what an E2B stream knows of its end: whether it returned its
// terminal event, whether it was closed here, and whether a restore of its
// sandbox began since it started (restored; nil: never asked).
type ending struct {
	mu       sync.Mutex
	done     bool
	closed   bool
	restored func() bool
}

// over reports whether nothing more is to be returned.
func (e *ending) over() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.done || e.closed
}

// terminal marks the terminal event returned and returns it: a restore
// kills the sandbox's commands, so one that ends once a restore began
// says so (unavailable(checkpoint_restored)), whatever ended it.
func (e *ending) terminal(ev paddock.Event) paddock.Event {
	e.mu.Lock()
	e.done = true
	e.mu.Unlock()
	if e.restored != nil && e.restored() {
		return paddock.Failed(&paddock.UnavailableError{Detail: paddock.DetailCheckpointRestored})
	}
	return ev
}

// isClosed reports whether the stream was closed here (a local detach).
func (e *ending) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// markClosed closes the stream; first is false for a repeated close, and
// done says whether the terminal event had been returned.
func (e *ending) markClosed() (first, done bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	first, e.closed = !e.closed, true
	return first, e.done
}

// Next returns the process's next event: output, then one exit (or an
// error), then io.EOF. A stream that ends without an end event is
// closed_before_exit, never a made-up exit.
func (s *stream) Next(ctx context.Context) (paddock.Event, error) {
	if s.over() {
		return paddock.Event{}, io.EOF
	}
	stop := context.AfterFunc(ctx, s.cancel) // a Next given up on ends the stream
	defer stop()
	for {
		ev, ok := s.recv()
		if !ok {
			if err := ctx.Err(); err != nil {
				return paddock.Event{}, err
			}
			return s.terminal(paddock.Failed(s.endError(s.err()))), nil
		}
		switch e := ev.GetEvent().(type) {
		case *processpb.ProcessEvent_Data:
			switch out := e.Data.GetOutput().(type) {
			case *processpb.ProcessEvent_DataEvent_Stdout:
				if len(out.Stdout) > 0 {
					return paddock.Stdout(out.Stdout), nil
				}
			case *processpb.ProcessEvent_DataEvent_Stderr:
				if len(out.Stderr) > 0 {
					return paddock.Stderr(out.Stderr), nil
				}
			case *processpb.ProcessEvent_DataEvent_Pty:
				if len(out.Pty) > 0 {
					return paddock.Stdout(out.Pty), nil
				}
			}
		case *processpb.ProcessEvent_End:
			if s.session != "" && !e.End.GetExited() {
				// The journal's wrapper ends with its command's code, whatever
				// killed the command; a wrapper killed itself leaves the
				// command's fate unknown (and no exit record).
				return s.terminal(paddock.Failed(paddock.ErrClosedBeforeExit)), nil
			}
			code, ok := exitCode(e.End)
			if !ok {
				return s.terminal(paddock.Failed(&paddock.ProviderError{Provider: paddock.ProviderE2B, Detail: "an end without a code: " + e.End.GetStatus()})), nil
			}
			return s.terminal(paddock.Exit(code)), nil
		}
		// start, keepalive, an empty chunk, an unknown event: nothing to say
	}
}

// endError is the error of a stream that ended without an end event: a
// clean end-of-stream, a body cut short or a connection lost is
// closed_before_exit; an error end is that error.
func (s *stream) endError(err error) error {
	var netErr *net.OpError
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &netErr) {
		return paddock.ErrClosedBeforeExit // the transport closed: the command's fate is unknown
	}
	var ce *connect.Error
	if errors.As(err, &ce) && ce.Code() == connect.CodeUnknown && strings.Contains(ce.Message(), "EndStreamResponse") {
		return paddock.ErrClosedBeforeExit // the body ended without an end-of-stream message
	}
	mapped := envdError(err)
	if errors.Is(mapped, paddock.ErrNotFound) {
		return paddock.ErrClosedBeforeExit // the process is gone without a recorded end
	}
	return mapped
}

// exitCode is the exit code of an end event: its own code when the
// process exited, 128+n when signal n killed it.
func exitCode(end *processpb.ProcessEvent_EndEvent) (int, bool) {
	if end.GetExited() {
		return int(end.GetExitCode()), true
	}
	name, ok := strings.CutPrefix(end.GetStatus(), "signal: ")
	if !ok {
		return 0, false
	}
	n, ok := signalNumbers[name]
	return 128 + n, ok
}

// signalNumbers are the numbers of the signals by the names Go's process
// states print.
var signalNumbers = map[string]int{
	"hangup": 1, "interrupt": 2, "quit": 3, "illegal instruction": 4, "trace/breakpoint trap": 5, "aborted": 6,
	"bus error": 7, "floating point exception": 8, "killed": 9, "user defined signal 1": 10,
	"segmentation fault": 11, "user defined signal 2": 12, "broken pipe": 13, "alarm clock": 14, "terminated": 15,
}

// WriteStdin writes p to the process's stdin; after Close it has exited.
func (s *stream) WriteStdin(ctx context.Context, p []byte) error {
	if s.isClosed() {
		return paddock.ErrCommandExited
	}
	return s.writeStdin(ctx, p)
}

// CloseStdin sends EOF; an exited process needs none; after Close it has
// exited.
func (s *stream) CloseStdin(ctx context.Context) error {
	if s.isClosed() {
		return paddock.ErrCommandExited
	}
	return s.closeStdin(ctx)
}

// writeStdin writes p to the process's stdin.
func (p process) writeStdin(ctx context.Context, b []byte) error {
	in := &processpb.ProcessInput{Input: &processpb.ProcessInput_Stdin{Stdin: b}}
	if p.tty {
		in.Input = &processpb.ProcessInput_Pty{Pty: b}
	}
	_, err := p.a.processes(p.sandbox, false).SendInput(ctx, connect.NewRequest(&processpb.SendInputRequest{Process: pidOf(p.pid), Input: in}))
	return controlError(err)
}

// controlError is envd's answer to input or a resize of a running
// process: a process gone has exited, envd's refusal is write_failed.
func controlError(err error) error {
	switch {
	case err == nil:
		return nil
	case connect.CodeOf(err) == connect.CodeNotFound:
		return paddock.ErrCommandExited
	case connect.CodeOf(err) == connect.CodeInternal:
		return &paddock.WriteFailedError{Detail: connectMessage(err)}
	}
	return envdError(err)
}

// closeStdin sends EOF (on a terminal, its end-of-file character ^D); a
// process gone needs none.
func (p process) closeStdin(ctx context.Context) error {
	if p.tty {
		err := p.writeStdin(ctx, []byte{0x04})
		if errors.Is(err, paddock.ErrCommandExited) {
			return nil
		}
		return err
	}
	_, err := p.a.processes(p.sandbox, false).CloseStdin(ctx, connect.NewRequest(&processpb.CloseStdinRequest{Process: pidOf(p.pid)}))
	if err == nil || connect.CodeOf(err) == connect.CodeNotFound {
		return nil
	}
	return envdError(err)
}

// Close ends the stream; a command that is not detachable is killed, since
// on E2B a process outlives its request.
func (s *stream) Close() error {
	first, done := s.markClosed()
	if !first {
		return nil
	}
	s.cancel()
	_ = s.close()
	if s.kill && !done {
		ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
		defer cancel()
		_ = s.signal(ctx, processpb.Signal_SIGNAL_SIGKILL)
	}
	return nil
}

// SessionID is the session a detachable spawn made ("" otherwise).
func (s *stream) SessionID() string { return s.session }

// ptyOf is envd's terminal of size.
func ptyOf(size paddock.TermSize) *processpb.PTY {
	return &processpb.PTY{Size: &processpb.PTY_Size{Cols: uint32(size.Cols), Rows: uint32(size.Rows)}}
}

// Resize sets the terminal's size with envd's Update (the command gets
// SIGWINCH); a command without a terminal is invalid.
func (s *stream) Resize(ctx context.Context, size paddock.TermSize) error {
	if err := size.Validate(); err != nil {
		return err
	}
	switch {
	case s.over():
		return paddock.ErrCommandExited
	case !s.tty:
		return &paddock.InvalidError{Detail: paddock.DetailTermSize + ": the command has no terminal"}
	}
	_, err := s.a.processes(s.sandbox, false).Update(ctx, connect.NewRequest(&processpb.UpdateRequest{Process: pidOf(s.pid), Pty: ptyOf(size)}))
	return controlError(err)
}

// signal sends sig to the process; one already gone is fine.
func (p process) signal(ctx context.Context, sig processpb.Signal) error {
	_, err := p.a.processes(p.sandbox, false).SendSignal(ctx, connect.NewRequest(&processpb.SendSignalRequest{Process: pidOf(p.pid), Signal: sig}))
	if err == nil || connect.CodeOf(err) == connect.CodeNotFound {
		return nil
	}
	return envdError(err)
}

// launch is how a process starts: with stdin open, on a terminal, under
// a tag.
type launch struct {
	stdin, tty bool
	size       *paddock.TermSize // the terminal's, nil = 80x24
	tag        string
}

// The size of a spawn's terminal unless it asks for one.
const ttyCols, ttyRows = 80, 24

// startProcess starts cmd in sandbox id and returns its stream once envd
// named its pid (so stdin can be written at once). The request's context
// has no deadline: envd would take it for the process's lifetime.
func (a *Adapter) startProcess(ctx context.Context, id string, cmd paddock.Cmd, l launch) (*stream, error) {
	cfg := &processpb.ProcessConfig{Cmd: cmd.Path, Args: cmd.Args}
	if len(cmd.Env) > 0 {
		cfg.Envs = map[string]string{}
		for _, e := range cmd.Env {
			cfg.Envs[e.Name] = e.Value // a later name wins
		}
	}
	if cmd.Dir != "" {
		cfg.Cwd = &cmd.Dir
	}
	req := &processpb.StartRequest{Process: cfg, Stdin: &l.stdin}
	if l.tag != "" {
		req.Tag = &l.tag
	}
	if l.tty {
		size := paddock.TermSize{Cols: ttyCols, Rows: ttyRows}
		if l.size != nil {
			size = *l.size
		}
		req.Pty = ptyOf(size)
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel) // the caller gave up before the start (Start itself waits for the answer's head)
	defer stop()
	st, err := a.processes(id, true).Start(sctx, connect.NewRequest(req))
	if err != nil {
		cancel()
		if ctx.Err() != nil {
			return nil, httpx.Transport(ctx.Err())
		}
		return nil, envdError(err)
	}
	s := &stream{process: process{a: a, sandbox: id, tty: l.tty}, cancel: cancel, close: st.Close, err: st.Err,
		recv: func() (*processpb.ProcessEvent, bool) {
			if !st.Receive() {
				return nil, false
			}
			return st.Msg().GetEvent(), true
		}}
	ev, ok := s.recv()
	if !ok || ev.GetStart() == nil {
		cancel()
		_ = st.Close()
		if ctx.Err() != nil {
			return nil, httpx.Transport(ctx.Err())
		}
		if err := st.Err(); err != nil {
			return nil, envdError(err)
		}
		return nil, &paddock.UnavailableError{Detail: "envd: the process stream began without a start event"}
	}
	s.pid = ev.GetStart().GetPid()
	return s, nil
}

// Spawn starts cmd and returns its stream once its pid is known, so stdin
// can be written at once. Closing the stream kills the process, unless it
// is detachable: that one runs under its journal, tagged with its session
// id, and goes on. A TTY spawn runs on a terminal of the size asked for
// (80x24 by default; Resize changes it): its output is
// stdout, its input goes to the terminal, and CloseStdin types ^D.
func (a *Adapter) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts) (paddock.Stream, error) {
	if err := paddock.ValidateSpawn(a, cmd, opts); err != nil {
		return nil, err
	}
	if opts.Detachable && opts.TTY {
		return nil, &paddock.InvalidError{Detail: "e2b: a detachable spawn is journaled through pipes, so it cannot have a terminal too"}
	}
	if !opts.Detachable && !textOnly(cmd) {
		return nil, &paddock.InvalidError{Detail: paddock.DetailCommand + ": E2B carries arguments as UTF-8 text; spawn it detachable to pass other bytes"}
	}
	restored := a.restores.Since(h.Name) // before the lookup: a restore may replace the sandbox found
	id, err := a.running(ctx, h)
	if err != nil {
		return nil, err
	}
	session := ""
	if opts.Detachable {
		session = newSessionID()
		cmd = journalCmd(session, cmd)
	}
	st, err := a.startProcess(ctx, id, cmd, launch{stdin: opts.Stdin, tty: opts.TTY, size: opts.Size, tag: session})
	if err != nil {
		return nil, err
	}
	st.kill, st.session, st.restored = !opts.Detachable, session, restored
	return st, nil
}
