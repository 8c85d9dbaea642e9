package docker

import (
	"cmp"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/eventq"
)

// readAhead bounds the events read ahead of Next: past it the engine
// stream backs up.
const readAhead = 64

// engineWait bounds a call the adapter makes on its own to learn an
// outcome (a session's recorded exit, which takes an exec; an exec's exit
// code; whether the sandbox still runs; the kill of a timed-out command):
// a loaded engine can take tens of seconds to answer (CI saw more than 15 s
// with 40 sessions ending at once, and streams whose exits were recorded
// ended closed_before_exit), so it is a hang bound, not a verdict.
const engineWait = 2 * time.Minute

// stream is one subscription to a session: a follower exec replaying the
// journal from byte zero and then tailing it (or, for a TTY session, the
// session's own exec). A reader goroutine turns it into events ending in
// exactly one terminal event: the recorded exit, or closed_before_exit
// when none was recorded.
type stream struct {
	a   *Adapter
	h   paddock.Handle
	id  string
	dir string
	tty bool
	// restored reports whether a restore of the sandbox began since the
	// TTY session started (nil for journaled sessions: their journal
	// records the restore that stopped them, for every adapter to read).
	restored func() bool
	inMu     sync.Mutex // held to replace in, and by Close to end it
	in       *attached  // the followed exec (TTY: the session itself)
	stdinOK  bool       // TTY: the exec has stdin attached

	q      *eventq.Queue  // closed by Close
	reader sync.WaitGroup // the reader, and the writer's drain

	exited atomic.Bool

	wmu         sync.Mutex
	writer      *attached     // the stdin writer exec, started on first use
	writerEnded chan struct{} // closed when the writer exec is over
	writerErr   string
}

var _ paddock.Stream = (*stream)(nil)

func (a *Adapter) newStream(h paddock.Handle, id string, tty bool, in *attached, restored func() bool) *stream {
	st := &stream{a: a, h: h, id: id, dir: sessionBase + "/s/" + id, tty: tty, in: in, restored: restored,
		q: eventq.New(readAhead)}
	st.reader.Add(1)
	go st.read()
	return st
}

// Bounds on replacing a follower that ended before the session did: the
// first wait, the longest, and how long followers may keep failing (none
// getting as far as its ready line) before the stream ends
// closed_before_exit.
const (
	followRetryFirst = 10 * time.Millisecond
	followRetryMost  = time.Second
	followFailing    = engineWait
)

// followStuck is how long a follower may go without its ready line before
// it is replaced (several tries fit in followFailing); a variable for the
// tests of it.
var followStuck = followFailing / 4

// read is the reader goroutine. A follower can end before the session
// does: the engine may fail to start its exec, or its shell may die (both
// happen when the sandbox is at its process limit, since runc's and the
// script's own processes count). Then another starts where the journal's
// delivered bytes end, so nothing is lost or sent twice.
func (st *stream) read() {
	defer st.reader.Done()
	var sent [3]int // bytes delivered, by multiplexed stream
	lastReady, delay := time.Now(), followRetryFirst
	for {
		ready, err := st.pump(&sent)
		if st.q.Closed() {
			return // a local detach: no terminal event
		}
		if ready {
			lastReady, delay = time.Now(), followRetryFirst
		}
		if st.tty || !errors.Is(err, io.EOF) || (ready && st.followerFinished()) {
			st.finish(st.outcome(err))
			return
		}
		if time.Since(lastReady) > followFailing {
			st.finish(paddock.Failed(paddock.ErrClosedBeforeExit))
			return
		}
		select {
		case <-st.q.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, followRetryMost)
		if !st.refollow(sent) {
			return
		}
	}
}

// pump delivers the current exec's output until it ends, counting the
// bytes sent per stream. A follower's output counts only after its ready
// line: what comes before it, or instead of it, is the engine's account
// of an exec it could not start, never the journal. ready reports that
// the line came (always, for a TTY session).
func (st *stream) pump(sent *[3]int) (ready bool, err error) {
	buf := make([]byte, 32<<10)
	var lead []byte // a follower's stdout until its ready line is whole
	foreign := false
	ready = st.tty
	// A follower whose ready line has not come within followStuck is one
	// the engine did not start: its attachment is let go, so the stream
	// replaces it at the bytes delivered (or ends, once followers have
	// failed for followFailing) instead of waiting on it for good.
	const waiting, said, cut = 0, 1, 2
	var state atomic.Int32 // waiting for the ready line, said, or cut by the watchdog
	if ready {
		state.Store(said) // a TTY session's own exec says nothing first
	}
	st.inMu.Lock()
	in := st.in
	st.inMu.Unlock()
	watchdog := time.AfterFunc(followStuck, func() {
		if state.CompareAndSwap(waiting, cut) {
			in.close()
		}
	})
	defer watchdog.Stop()
	for {
		stream, data, err := st.in.next(buf)
		if err != nil && state.Load() == cut {
			err = io.EOF // let go by the watchdog: replaced at the bytes delivered
		}
		if !ready && !foreign && len(data) > 0 {
			lead = append(lead, data...)
			switch {
			case stream != muxStdout || !strings.HasPrefix(followReady, string(lead[:min(len(lead), len(followReady))])):
				foreign = true
			case len(lead) >= len(followReady):
				ready, stream, data = true, muxStdout, lead[len(followReady):]
				state.CompareAndSwap(waiting, said)
			}
		}
		if kind := muxKind(stream); ready && kind != 0 && len(data) > 0 {
			if !st.q.Emit(paddock.Event{Kind: kind, Data: append([]byte(nil), data...)}) {
				return ready, io.EOF
			}
			sent[stream] += len(data)
		}
		if err != nil {
			return ready, err
		}
	}
}

// followerFinished reports whether the follower exec ended as its script
// ends once the session has: with exit 0. The engine may say running for a
// moment after the stream ends; one still running after followerSettle
// had its attachment cut while it tails on (an engine hiccup), and is
// replaced at the bytes delivered: answering false is always safe, since
// a new follower sends only what is left, and then ends itself.
func (st *stream) followerFinished() bool {
	ctx, cancel := context.WithTimeout(context.Background(), followerSettle)
	defer cancel()
	code, err := st.a.exitCodeWithin(ctx, st.in.id)
	return err == nil && code == 0
}

// followerSettle bounds how long a follower whose stream ended may still
// be reported running before it is taken for one cut off.
const followerSettle = 5 * time.Second

// refollow replaces the follower with one that starts at the bytes sent;
// false when the stream is closed, or ended for want of an engine.
func (st *stream) refollow(sent [3]int) bool {
	ctx, cancel := st.engineContext()
	defer cancel()
	x, err := st.a.startExec(ctx, st.h.Name, followSpec(st.dir, sent[muxStdout], sent[muxStderr]))
	if err != nil {
		if !st.q.Closed() {
			st.finish(paddock.Failed(paddock.ErrClosedBeforeExit))
		}
		return false
	}
	st.inMu.Lock()
	defer st.inMu.Unlock()
	if st.q.Closed() {
		x.close()
		return false
	}
	st.in.close()
	st.in = x
	return true
}

// followSpec is the follower exec of the session in dir, from the given
// offsets of its stdout and stderr.
func followSpec(dir string, stdout, stderr int) execSpec {
	return execSpec{cmd: sh(scriptFollow, dir, strconv.Itoa(stdout), strconv.Itoa(stderr))}
}

// finish sends the terminal event.
func (st *stream) finish(ev paddock.Event) {
	st.exited.Store(true)
	st.q.Emit(ev)
	st.a.touch(st.h)
}

// engineContext bounds a call the stream makes on its own: by engineWait,
// and by a Close meanwhile.
func (st *stream) engineContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), engineWait)
	go func() {
		select {
		case <-st.q.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// outcome is the terminal event once the followed stream ended. The
// recorded exit is read by an exec, which the engine may fail to start
// while the sandbox is at its process limit (the script itself always
// exits 0): it is asked again, within engineWait.
func (st *stream) outcome(streamErr error) paddock.Event {
	if !errors.Is(streamErr, io.EOF) {
		return paddock.Failed(paddock.ErrClosedBeforeExit)
	}
	if st.tty {
		if st.restored != nil && st.restored() {
			// A restore stops every command: the kill's exit is not the
			// command's own.
			return paddock.Failed(&paddock.UnavailableError{Detail: paddock.DetailCheckpointRestored})
		}
		code, err := st.a.finished(st.h.Name, st.in.id)
		if err != nil {
			return paddock.Failed(err)
		}
		return paddock.Exit(code)
	}
	ctx, cancel := st.engineContext()
	defer cancel()
	for delay := followRetryFirst; ; delay = min(2*delay, followRetryMost) {
		out, err := st.a.run(ctx, st.h.Name, execSpec{cmd: sh(scriptResult, st.dir)}, nil)
		if err != nil {
			return paddock.Failed(paddock.ErrClosedBeforeExit)
		}
		if reason, ok := strings.CutPrefix(string(out.stdout), "reason "); out.code == 0 && ok {
			// Stopped for a reason the adapter wrote (a restore's).
			if reason == paddock.DetailCheckpointRestored {
				return paddock.Failed(&paddock.UnavailableError{Detail: reason})
			}
			return paddock.Failed(paddock.ErrClosedBeforeExit)
		}
		if out.code == 0 {
			code, err := strconv.Atoi(strings.TrimSpace(string(out.stdout)))
			if err != nil || code < 0 || code > 255 {
				// The runner went away without recording an exit.
				return paddock.Failed(paddock.ErrClosedBeforeExit)
			}
			return paddock.Exit(code)
		}
		select {
		case <-ctx.Done():
			return paddock.Failed(paddock.ErrClosedBeforeExit)
		case <-time.After(delay):
		}
	}
}

// Next returns the next event; io.EOF after the terminal event or Close.
func (st *stream) Next(ctx context.Context) (paddock.Event, error) { return st.q.Next(ctx) }

// WriteStdin passes p to the session's stdin: over the TTY, or through a
// writer exec feeding the session's stdin pipe (any subscriber can write).
func (st *stream) WriteStdin(ctx context.Context, p []byte) error {
	if st.q.Closed() || st.exited.Load() {
		return paddock.ErrCommandExited
	}
	if st.tty {
		if !st.stdinOK {
			return &paddock.WriteFailedError{Detail: "docker: the session was started without stdin"}
		}
		return st.write(st.in, p)
	}
	w, err := st.stdinWriter(ctx)
	if err != nil {
		return err
	}
	return st.write(w, p)
}

func (st *stream) write(x *attached, p []byte) error {
	if _, err := x.hj.Conn.Write(p); err != nil {
		if st.exited.Load() || st.q.Closed() {
			return paddock.ErrCommandExited
		}
		return &paddock.WriteFailedError{Detail: "docker: writing stdin: " + short(err.Error())}
	}
	return nil
}

// stdinWriter returns the writer exec, starting it on first use.
func (st *stream) stdinWriter(ctx context.Context) (*attached, error) {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	if st.writer != nil {
		select {
		case <-st.writerEnded:
			if st.exited.Load() {
				return nil, paddock.ErrCommandExited
			}
			return nil, &paddock.WriteFailedError{Detail: "docker: " + st.writerErr}
		default:
			return st.writer, nil
		}
	}
	w, err := st.a.startExec(ctx, st.h.Name, execSpec{cmd: sh(scriptWriter, st.dir), stdin: true})
	if err != nil {
		return nil, &paddock.WriteFailedError{Detail: "docker: starting the stdin writer: " + err.Error()}
	}
	st.writer, st.writerEnded = w, make(chan struct{})
	st.reader.Add(1)
	go func() {
		defer st.reader.Done()
		defer close(st.writerEnded)
		var msg strings.Builder
		buf := make([]byte, 4096)
		for {
			_, data, err := w.next(buf)
			if msg.Len() < 512 {
				msg.Write(data)
			}
			if err != nil {
				break
			}
		}
		st.writerErr = strings.TrimSpace(msg.String())
		st.writerErr = cmp.Or(st.writerErr, "the stdin writer ended")
	}()
	return w, nil
}

// CloseStdin ends the session's stdin: the writer is finished (so all it
// was given has reached the command), then the pipe's holder goes. Fine
// after the exit.
func (st *stream) CloseStdin(ctx context.Context) error {
	if st.exited.Load() {
		return nil
	}
	if st.q.Closed() {
		return paddock.ErrCommandExited
	}
	if st.tty {
		if !st.stdinOK {
			return &paddock.WriteFailedError{Detail: "docker: the session was started without stdin"}
		}
		return st.write(st.in, []byte{0x04}) // end of input on a terminal
	}
	st.wmu.Lock()
	w, ended := st.writer, st.writerEnded
	st.wmu.Unlock()
	if w != nil {
		_ = w.closeWrite()
		select {
		case <-ended:
		case <-ctx.Done():
			return &paddock.WriteFailedError{Detail: "docker: closing stdin: " + ctx.Err().Error()}
		}
	}
	if _, err := st.a.run(ctx, st.h.Name, execSpec{cmd: sh(scriptCloseStdin, st.dir)}, nil); err != nil {
		if st.exited.Load() {
			return nil
		}
		return &paddock.WriteFailedError{Detail: "docker: closing stdin: " + err.Error()}
	}
	return nil
}

// Signal delivers sig to the session's process group, from an exec in
// the sandbox (docs/contract.md#op-signal). A write given before it has
// reached the writer exec, though not always the command's pipe.
func (st *stream) Signal(ctx context.Context, sig paddock.Signal) error {
	if err := sig.Deliverable(st.q.Closed() || st.exited.Load()); err != nil {
		return err
	}
	out, err := st.a.run(ctx, st.h.Name, execSpec{cmd: sh(scriptSignal, st.dir, string(sig))}, nil)
	switch {
	case err != nil && st.exited.Load():
		return paddock.ErrCommandExited
	case err != nil:
		return &paddock.WriteFailedError{Detail: "docker: signal: " + err.Error()}
	case out.code == 0:
		return nil
	case out.code == 3 || out.code == 4:
		return paddock.ErrCommandExited
	}
	return &paddock.WriteFailedError{Detail: "docker: signal: " + short(string(out.stderr))}
}

// Resize sets a TTY session's terminal size; the command gets SIGWINCH.
func (st *stream) Resize(ctx context.Context, size paddock.TermSize) error {
	if err := size.Validate(); err != nil {
		return err
	}
	switch {
	case st.q.Closed() || st.exited.Load():
		return paddock.ErrCommandExited
	case !st.tty:
		return &paddock.InvalidError{Detail: paddock.DetailTermSize + ": the command has no terminal"}
	}
	if err := st.a.resize(ctx, st.in.id, size); err != nil {
		if st.exited.Load() {
			return paddock.ErrCommandExited
		}
		return &paddock.WriteFailedError{Detail: "docker: resize: " + err.Error()}
	}
	return nil
}

// Close detaches: the session runs on, attachable again.
func (st *stream) Close() error {
	if !st.q.Close() {
		return nil
	}
	st.inMu.Lock()
	st.in.close()
	st.inMu.Unlock()
	st.wmu.Lock()
	if st.writer != nil {
		st.writer.close()
	}
	st.wmu.Unlock()
	st.reader.Wait()
	return nil
}

// SessionID is the session's id.
func (st *stream) SessionID() string { return st.id }

// Spawn starts cmd as a detachable session and streams it. Without a TTY
// the session is journaled in the sandbox's scratch space (Attach replays
// it from byte zero, live or finished); a named spawn whose name is live
// returns that session, replayed, instead of starting another. With a TTY
// the command runs on the exec's terminal: listed and terminable, not
// journaled, so it cannot be re-attached (a detachable TTY spawn is
// invalid).
func (a *Adapter) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts) (paddock.Stream, error) {
	if err := paddock.ValidateSpawn(a, cmd, opts); err != nil {
		return nil, err
	}
	a.serveEgress(ctx, h.Name)
	created := strconv.FormatInt(time.Now().UnixNano(), 10)
	id := randomID()
	if opts.TTY {
		restored := a.restores.Since(h.Name)
		if opts.Name != "" {
			return nil, &paddock.InvalidError{Detail: paddock.DetailSpawnOptions + ": docker names only journaled (non-TTY) sessions"}
		}
		if opts.Detachable {
			return nil, &paddock.InvalidError{Detail: paddock.DetailSpawnOptions + ": docker journals only non-TTY sessions, so a terminal cannot be attached again"}
		}
		size := paddock.TermSize{Cols: 80, Rows: 24}
		if opts.Size != nil {
			size = *opts.Size
		}
		args := append([]string{sessionBase, id, created, strconv.Itoa(size.Rows), strconv.Itoa(size.Cols)}, cmd.Argv()...)
		x, err := a.startExec(ctx, h.Name, execSpec{cmd: sh(scriptTTY, args...),
			env: envOf(cmd), dir: cmd.Dir, stdin: opts.Stdin, tty: true, size: size})
		if err != nil {
			return nil, err
		}
		if err := a.resize(ctx, x.id, size); err != nil {
			x.close()
			return nil, err
		}
		// Returned, the session is addressable: signals and termination
		// find its pid.
		started, err := a.run(ctx, h.Name, execSpec{cmd: sh(scriptTTYStarted, sessionBase+"/s/"+id)}, nil)
		if err == nil && started.code != 0 {
			err = &paddock.UnavailableError{Detail: "docker: the terminal session did not start: " + short(string(started.stderr))}
		}
		if err != nil {
			x.close()
			return nil, err
		}
		st := a.newStream(h, id, true, x, restored)
		st.stdinOK = opts.Stdin
		a.touch(h)
		return st, nil
	}
	stdin := "0"
	if opts.Stdin {
		stdin = "1"
	}
	args := append([]string{sessionBase, id, opts.Name, stdin, created}, cmd.Argv()...)
	x, err := a.startExec(ctx, h.Name, execSpec{cmd: sh(scriptSession, args...), env: envOf(cmd), dir: cmd.Dir})
	if err != nil {
		return nil, err
	}
	// The exec goes on as the session's runner: the line it prints says
	// the session started, and the attachment is let go after it.
	line, failure, err := firstLine(ctx, x)
	if err != nil {
		return nil, err
	}
	verb, got, _ := strings.Cut(strings.TrimSpace(line), " ")
	if (verb != "started" && verb != "existing") || paddock.ValidateSessionID(got) != nil {
		return nil, &paddock.UnavailableError{Detail: "docker: starting the session failed: " + short(failure+line)}
	}
	return a.follow(ctx, h, got)
}
