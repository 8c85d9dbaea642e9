package e2btest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"connectrpc.com/connect"
	"github.com/creack/pty"
	"github.com/paddockhq/paddock/adapters/e2b/envd/processpb"
	"github.com/paddockhq/paddock/adapters/internal/stubfs"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// exitRetention is how long an ended process still answers Connect.
const exitRetention = 30 * time.Second

// chunk is the most output one data event carries, as envd reads pipes;
// a terminal is read in smaller chunks.
const (
	chunk    = 32 << 10
	ptyChunk = 16 << 10
)

// process is one process envd started: real, on this machine, in the
// sandbox's directory.
type process struct {
	pid    uint32
	tag    *string
	config *processpb.ProcessConfig
	cmd    *exec.Cmd

	mu          sync.Mutex
	stdin       io.WriteCloser // nil: started without stdin
	stdinClosed bool
	tty         *os.File // the terminal's master side; nil for pipes
	subs        map[*subscriber]struct{}
	end         *processpb.ProcessEvent_EndEvent // set once it ended
	endedAt     time.Time
	done        chan struct{} // closed once it ended
	outlived    bool          // killed at its Start's deadline
}

// subscriber is one Start or Connect stream following a process. Each
// chunk waits until every subscriber took it, as envd's multiplexer does.
type subscriber struct {
	events chan *processpb.ProcessEvent
	gone   chan struct{} // the stream's request ended
}

// processes of one sandbox.
type processTable struct {
	sb    *sandbox
	mu    sync.Mutex
	byPID map[uint32]*process
	cuts  []chan struct{} // one per open stream, closed by a pause
}

func newProcessTable(sb *sandbox) *processTable {
	return &processTable{sb: sb, byPID: map[uint32]*process{}}
}

// cutStreams drops every open process stream (a pause does).
func (t *processTable) cutStreams() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.cuts {
		close(c)
	}
	t.cuts = nil
}

// openStream registers a stream for cutting.
func (t *processTable) openStream() chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := make(chan struct{})
	t.cuts = append(t.cuts, c)
	return c
}

// signalAll sends sig to every live process.
func (t *processTable) signalAll(sig syscall.Signal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range t.byPID {
		if p.live() {
			_ = stubproc.SignalGroup(int(p.pid), sig)
		}
	}
}

func (p *process) live() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.end == nil
}

// find looks a process up by selector: a pid exactly; a tag the first
// live process carrying it.
func (t *processTable) find(sel *processpb.ProcessSelector, alsoEnded bool) (*process, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch s := sel.GetSelector().(type) {
	case *processpb.ProcessSelector_Pid:
		if p := t.byPID[s.Pid]; p != nil && (alsoEnded || p.live()) && t.retained(p) {
			return p, nil
		}
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("process with pid %d not found", s.Pid))
	case *processpb.ProcessSelector_Tag:
		for _, p := range t.byPID {
			if p.tag != nil && *p.tag == s.Tag && (alsoEnded || p.live()) && t.retained(p) {
				return p, nil
			}
		}
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("process with tag %s not found", s.Tag))
	}
	return nil, connect.NewError(connect.CodeUnimplemented, errors.New("invalid input type *process.ProcessSelector"))
}

// retained reports whether an ended process is still within its
// retention (the caller holds t.mu).
func (t *processTable) retained(p *process) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.end == nil || time.Since(p.endedAt) < exitRetention
}

// processService is envd's Process service for every sandbox; the
// sandbox comes with the request's context.
type processService struct{ s *Server }

type sandboxKey struct{}

func sandboxOf(ctx context.Context) *sandbox { return ctx.Value(sandboxKey{}).(*sandbox) }

// Start runs a process and follows it.
func (ps processService) Start(ctx context.Context, req *connect.Request[processpb.StartRequest], stream *connect.ServerStream[processpb.StartResponse]) error {
	sb := sandboxOf(ctx)
	p, sub, err := sb.start(req.Msg, userOf(req.Header()))
	if err != nil {
		return err
	}
	if req.Header().Get("Connect-Timeout-Ms") == "0" {
		// envd ends such a stream at once, before the start event, and
		// the process runs on.
		p.unsubscribe(sub)
		return connect.NewError(connect.CodeDeadlineExceeded, errors.New("context deadline exceeded"))
	}
	at, deadline := ctx.Deadline()
	if deadline {
		p.killAt(at) // whether the client stays or not, as envd does
	}
	return ps.follow(ctx, sb, p, sub, deadline, func(ev *processpb.ProcessEvent) error {
		return stream.Send(&processpb.StartResponse{Event: ev})
	}, req.Header().Get("Keepalive-Ping-Interval"))
}

// Connect follows a running (or just ended) process.
func (ps processService) Connect(ctx context.Context, req *connect.Request[processpb.ConnectRequest], stream *connect.ServerStream[processpb.ConnectResponse]) error {
	sb := sandboxOf(ctx)
	p, err := sb.procs.find(req.Msg.GetProcess(), true)
	if err != nil {
		return err
	}
	return ps.follow(ctx, sb, p, nil, false, func(ev *processpb.ProcessEvent) error {
		return stream.Send(&processpb.ConnectResponse{Event: ev})
	}, req.Header().Get("Keepalive-Ping-Interval"))
}

// killAt kills the process's group at the time given, unless it has
// ended by then: a Start's Connect-Timeout-Ms is the process's lifetime.
func (p *process) killAt(at time.Time) {
	t := time.AfterFunc(time.Until(at), func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.end == nil { // its pid is still its own
			p.outlived = true
			_ = stubproc.SignalGroup(int(p.pid), syscall.SIGKILL)
		}
	})
	go func() {
		<-p.done
		t.Stop()
	}()
}

// follow streams a process: start, output while subscribed, its end.
// Connect-Timeout-Ms on a Start is the process's lifetime, as on envd: at
// the deadline the process is killed and the stream ends deadline_exceeded
// with no end event. A client that leaves leaves the process running. A
// pause cuts the stream with no end-of-stream message.
// A Start's subscriber (sub) was registered before the process could
// print, so it misses nothing; a Connect subscribes now, for live output.
func (ps processService) follow(ctx context.Context, sb *sandbox, p *process, sub *subscriber, deadline bool, send func(*processpb.ProcessEvent) error, keepalive string) error {
	start := sub != nil
	interval := 90 * time.Second
	if keepalive != "" {
		n, err := strconv.Atoi(keepalive)
		if err == nil && n <= 0 {
			ps.s.t.Errorf("e2btest: Keepalive-Ping-Interval %q crashes a real envd", keepalive)
			panic(http.ErrAbortHandler)
		}
		if err == nil {
			interval = time.Duration(n) * time.Second
		}
	}
	if sub == nil {
		sub = p.subscribe()
	}
	defer p.unsubscribe(sub)
	cut := sb.procs.openStream()
	if err := send(&processpb.ProcessEvent{Event: &processpb.ProcessEvent_Start{Start: &processpb.ProcessEvent_StartEvent{Pid: p.pid}}}); err != nil {
		return err
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case ev, ok := <-sub.events:
			if !ok {
				return nil // ended and sent: a clean end of stream
			}
			if start && deadline && ev.GetEnd() != nil && p.killedAtDeadline() {
				// The deadline's kill ended it; the stream's own deadline
				// may not have fired yet, but envd never sends this end.
				return connect.NewError(connect.CodeDeadlineExceeded, errors.New("context deadline exceeded"))
			}
			if err := send(ev); err != nil {
				return err
			}
			ticker.Reset(interval)
		case <-ticker.C:
			if err := send(&processpb.ProcessEvent{Event: &processpb.ProcessEvent_Keepalive{Keepalive: &processpb.ProcessEvent_KeepAlive{}}}); err != nil {
				return err
			}
		case <-cut:
			panic(http.ErrAbortHandler) // the connection drops, as a pause drops it
		case <-ctx.Done():
			if deadline && errors.Is(ctx.Err(), context.DeadlineExceeded) && start {
				return connect.NewError(connect.CodeDeadlineExceeded, errors.New("context deadline exceeded")) // killAt kills it
			}
			return ctx.Err()
		}
	}
}

// killedAtDeadline says whether killAt's deadline ended the process.
func (p *process) killedAtDeadline() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.outlived
}

// subscribe adds a subscriber; an ended process gets its end at once.
func (p *process) subscribe() *subscriber {
	p.mu.Lock()
	defer p.mu.Unlock()
	sub := &subscriber{events: make(chan *processpb.ProcessEvent), gone: make(chan struct{})}
	if p.end != nil {
		ch := make(chan *processpb.ProcessEvent, 1)
		ch <- &processpb.ProcessEvent{Event: &processpb.ProcessEvent_End{End: p.end}}
		close(ch)
		sub.events = ch
		return sub
	}
	p.subs[sub] = struct{}{}
	return sub
}

func (p *process) unsubscribe(sub *subscriber) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.subs[sub]; ok {
		delete(p.subs, sub)
		close(sub.gone)
	}
}

// broadcast hands ev to every current subscriber, waiting for each (a
// subscriber that does not read stalls the process's output, as on envd);
// with none, the output is dropped.
func (p *process) broadcast(ev *processpb.ProcessEvent) {
	p.mu.Lock()
	subs := make([]*subscriber, 0, len(p.subs))
	for s := range p.subs {
		subs = append(subs, s)
	}
	p.mu.Unlock()
	for _, s := range subs {
		select {
		case s.events <- ev:
		case <-s.gone:
		}
	}
}

// start launches a process for req in the sandbox as user, with the
// Start stream's subscriber in place before it can print.
func (sb *sandbox) start(req *processpb.StartRequest, user stubfs.User) (*process, *subscriber, error) {
	cfg := req.GetProcess()
	cwd := user.Home
	if cfg.Cwd != nil {
		cwd = sb.inside(cfg.GetCwd(), user)
		host, err := sb.space.Path(cwd)
		if err != nil {
			return nil, nil, connect.NewError(connect.CodeInternal, err)
		}
		if info, err := os.Stat(host); err != nil || !info.IsDir() {
			return nil, nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("cwd '%s' does not exist", cfg.GetCwd()))
		}
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + sb.space.Seen(user.Home), "USER=" + user.Name, "LOGNAME=" + user.Name, "E2B_SANDBOX=true"}
	for k, v := range sb.envVars {
		env = append(env, k+"="+v)
	}
	for k, v := range cfg.GetEnvs() {
		env = append(env, k+"="+v)
	}
	// Like envd, through a shell that execs the command, so a missing
	// command is a start, stderr and exit 127, never a start failure; in
	// the sandbox's namespace and root where there is one, as the user.
	cmd, err := sb.space.Command(cwd, user, cfg.GetCmd(), cfg.GetArgs()...)
	if err != nil {
		return nil, nil, connect.NewError(connect.CodeInternal, err)
	}
	cmd.Env = env
	p := &process{tag: req.Tag, config: cfg, cmd: cmd, subs: map[*subscriber]struct{}{}, done: make(chan struct{})}
	if req.GetPty() != nil {
		return sb.startOnTerminal(p, req.GetPty().GetSize())
	}
	if req.Stdin == nil || req.GetStdin() { // absent means open, for old clients
		w, err := cmd.StdinPipe()
		if err != nil {
			return nil, nil, connect.NewError(connect.CodeInternal, err)
		}
		p.stdin = w
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, connect.NewError(connect.CodeInternal, err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, nil, connect.NewError(connect.CodeInternal, err)
	}
	sub := p.subscribe()
	if err := cmd.Start(); err != nil {
		return nil, nil, connect.NewError(connect.CodeInternal, err)
	}
	sb.running(p, output{stdoutEvent, stdout}, output{stderrEvent, stderr})
	return p, sub, nil
}

// startOnTerminal starts p's command as the session leader of a new
// terminal of the given size (0 = 80x24), as envd does for a PTY request:
// its output comes as pty data, its input is typed into the terminal.
func (sb *sandbox) startOnTerminal(p *process, size *processpb.PTY_Size) (*process, *subscriber, error) {
	attrs := stubproc.TerminalAttr(p.cmd.SysProcAttr)
	ws := &pty.Winsize{Cols: uint16(size.GetCols()), Rows: uint16(size.GetRows())}
	if ws.Cols == 0 || ws.Rows == 0 {
		ws.Cols, ws.Rows = 80, 24
	}
	sub := p.subscribe()
	master, err := pty.StartWithAttrs(p.cmd, ws, attrs)
	if err != nil {
		return nil, nil, connect.NewError(connect.CodeInternal, err)
	}
	p.tty = master
	sb.running(p, output{ptyEvent, master})
	return p, sub, nil
}

// output is one output of a process: where it comes from and the data
// event that carries it.
type output struct {
	event func([]byte) *processpb.ProcessEvent_DataEvent
	from  io.Reader
}

// running records a started process and pumps its outputs until it ends.
func (sb *sandbox) running(p *process, outputs ...output) {
	p.pid = uint32(p.cmd.Process.Pid)
	sb.procs.mu.Lock()
	sb.procs.byPID[p.pid] = p
	sb.procs.mu.Unlock()
	sb.s.Go(func() { p.run(outputs...) })
}

// The data events of each output.
func stdoutEvent(b []byte) *processpb.ProcessEvent_DataEvent {
	return &processpb.ProcessEvent_DataEvent{Output: &processpb.ProcessEvent_DataEvent_Stdout{Stdout: b}}
}

func stderrEvent(b []byte) *processpb.ProcessEvent_DataEvent {
	return &processpb.ProcessEvent_DataEvent{Output: &processpb.ProcessEvent_DataEvent_Stderr{Stderr: b}}
}

func ptyEvent(b []byte) *processpb.ProcessEvent_DataEvent {
	return &processpb.ProcessEvent_DataEvent{Output: &processpb.ProcessEvent_DataEvent_Pty{Pty: b}}
}

// run pumps the outputs to the subscribers, then records and sends the
// end.
func (p *process) run(outputs ...output) {
	var pumps sync.WaitGroup
	pump := func(o output) {
		defer pumps.Done()
		buf := make([]byte, chunk)
		if p.tty != nil {
			buf = buf[:ptyChunk]
		}
		for {
			n, err := o.from.Read(buf)
			if n > 0 {
				p.broadcast(&processpb.ProcessEvent{Event: &processpb.ProcessEvent_Data{Data: o.event(append([]byte(nil), buf[:n]...))}})
			}
			if err != nil {
				return // EOF, or EIO from a terminal whose last user left
			}
		}
	}
	for _, o := range outputs {
		pumps.Add(1)
		go pump(o)
	}
	pumps.Wait()
	waitErr := p.cmd.Wait()
	if p.tty != nil {
		_ = p.tty.Close()
	}
	ps := p.cmd.ProcessState
	end := &processpb.ProcessEvent_EndEvent{ExitCode: int32(ps.ExitCode()), Exited: ps.Exited(), Status: ps.String()}
	if waitErr != nil {
		e := waitErr.Error()
		end.Error = &e
	}
	ev := &processpb.ProcessEvent{Event: &processpb.ProcessEvent_End{End: end}}
	p.broadcast(ev)
	p.mu.Lock()
	p.end, p.endedAt = end, time.Now()
	subs := p.subs
	p.subs = map[*subscriber]struct{}{}
	p.mu.Unlock()
	for s := range subs {
		close(s.events)
	}
	close(p.done)
}

// inside is the absolute sandbox path p names for user: relative paths
// and ~ are under the user's home.
func (sb *sandbox) inside(p string, user stubfs.User) string {
	switch {
	case p == "~" || p == "":
		p = user.Home
	case strings.HasPrefix(p, "~/"):
		p = user.Home + p[1:]
	case !strings.HasPrefix(p, "/"):
		p = user.Home + "/" + p
	}
	return path.Clean("/" + p)
}

// List answers the live processes.
func (ps processService) List(ctx context.Context, _ *connect.Request[processpb.ListRequest]) (*connect.Response[processpb.ListResponse], error) {
	sb := sandboxOf(ctx)
	sb.procs.mu.Lock()
	defer sb.procs.mu.Unlock()
	out := &processpb.ListResponse{}
	for _, p := range sb.procs.byPID {
		if p.live() {
			out.Processes = append(out.Processes, &processpb.ProcessInfo{Config: p.config, Pid: p.pid, Tag: p.tag})
		}
	}
	return connect.NewResponse(out), nil
}

// SendInput writes to a live process's stdin, or types into its terminal.
func (ps processService) SendInput(ctx context.Context, req *connect.Request[processpb.SendInputRequest]) (*connect.Response[processpb.SendInputResponse], error) {
	p, err := sandboxOf(ctx).procs.find(req.Msg.GetProcess(), false)
	if err != nil {
		return nil, err
	}
	var data []byte
	switch in := req.Msg.GetInput().GetInput().(type) {
	case *processpb.ProcessInput_Stdin:
		if p.tty != nil {
			return nil, connect.NewError(connect.CodeInternal, errors.New("error writing to stdin: stdin not enabled or closed"))
		}
		data = in.Stdin
	case *processpb.ProcessInput_Pty:
		if p.tty == nil {
			return nil, connect.NewError(connect.CodeInternal, errors.New("error writing to pty: tty not assigned to process"))
		}
		if _, err := p.tty.Write(in.Pty); err != nil {
			return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("error writing to pty: %w", err))
		}
		return connect.NewResponse(&processpb.SendInputResponse{}), nil
	default:
		return nil, connect.NewError(connect.CodeUnimplemented, errors.New("invalid input type <nil>"))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stdin == nil || p.stdinClosed {
		return nil, connect.NewError(connect.CodeInternal, errors.New("error writing to stdin: stdin not enabled or closed"))
	}
	if _, err := p.stdin.Write(data); err != nil {
		return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("error writing to stdin: %w", err))
	}
	return connect.NewResponse(&processpb.SendInputResponse{}), nil
}

// CloseStdin closes a live process's stdin (again: still {}); a terminal
// has no stdin to close.
func (ps processService) CloseStdin(ctx context.Context, req *connect.Request[processpb.CloseStdinRequest]) (*connect.Response[processpb.CloseStdinResponse], error) {
	p, err := sandboxOf(ctx).procs.find(req.Msg.GetProcess(), false)
	if err != nil {
		return nil, err
	}
	if p.tty != nil {
		return nil, connect.NewError(connect.CodeUnknown, errors.New("error closing stdin: cannot close stdin for PTY process — send Ctrl+D (0x04) instead"))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stdin != nil && !p.stdinClosed {
		p.stdinClosed = true
		_ = p.stdin.Close()
	}
	return connect.NewResponse(&processpb.CloseStdinResponse{}), nil
}

// SendSignal sends SIGTERM or SIGKILL to a live process.
func (ps processService) SendSignal(ctx context.Context, req *connect.Request[processpb.SendSignalRequest]) (*connect.Response[processpb.SendSignalResponse], error) {
	p, err := sandboxOf(ctx).procs.find(req.Msg.GetProcess(), false)
	if err != nil {
		return nil, err
	}
	var sig syscall.Signal
	switch req.Msg.GetSignal() {
	case processpb.Signal_SIGNAL_SIGTERM:
		sig = syscall.SIGTERM
	case processpb.Signal_SIGNAL_SIGKILL:
		sig = syscall.SIGKILL
	default:
		return nil, connect.NewError(connect.CodeUnimplemented, fmt.Errorf("invalid signal: %s", req.Msg.GetSignal()))
	}
	_ = stubproc.Signal(int(p.pid), sig)
	return connect.NewResponse(&processpb.SendSignalResponse{}), nil
}

// Update resizes a PTY process's terminal; without a size it does
// nothing, as on envd.
func (ps processService) Update(ctx context.Context, req *connect.Request[processpb.UpdateRequest]) (*connect.Response[processpb.UpdateResponse], error) {
	p, err := sandboxOf(ctx).procs.find(req.Msg.GetProcess(), false)
	if err != nil {
		return nil, err
	}
	switch size := req.Msg.GetPty().GetSize(); {
	case req.Msg.GetPty() == nil:
	case p.tty == nil:
		return nil, connect.NewError(connect.CodeInternal, errors.New("error resizing tty: tty not assigned to process"))
	default:
		if err := stubproc.SetTerminalSize(p.tty, uint16(size.GetCols()), uint16(size.GetRows())); err != nil {
			return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("error resizing tty: %w", err))
		}
	}
	return connect.NewResponse(&processpb.UpdateResponse{}), nil
}

// StreamInput feeds a process from a client stream: a start naming it,
// then data.
func (ps processService) StreamInput(ctx context.Context, stream *connect.ClientStream[processpb.StreamInputRequest]) (*connect.Response[processpb.StreamInputResponse], error) {
	var p *process
	for stream.Receive() {
		switch ev := stream.Msg().GetEvent().(type) {
		case *processpb.StreamInputRequest_Start:
			found, err := sandboxOf(ctx).procs.find(ev.Start.GetProcess(), false)
			if err != nil {
				return nil, err
			}
			p = found
		case *processpb.StreamInputRequest_Data:
			if p == nil {
				return nil, connect.NewError(connect.CodeFailedPrecondition, errors.New("no start event"))
			}
			if _, err := ps.SendInput(ctx, connect.NewRequest(&processpb.SendInputRequest{Process: &processpb.ProcessSelector{Selector: &processpb.ProcessSelector_Pid{Pid: p.pid}}, Input: ev.Data.GetInput()})); err != nil {
				return nil, err
			}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	return connect.NewResponse(&processpb.StreamInputResponse{}), nil
}
