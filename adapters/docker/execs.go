package docker

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock"
	"github.com/rs/zerolog"
)

// Streams of the engine's multiplexed (non-TTY) exec stream: an 8-byte
// header (stream, three zero bytes, big-endian payload length), then the
// payload.
const (
	muxStdout byte = 1
	muxStderr byte = 2
	muxSystem byte = 3 // an engine error
)

// muxKind is the event kind of a multiplexed stream's output: stdout,
// stderr, or none (0) for the engine's own messages.
func muxKind(stream byte) paddock.EventKind {
	switch stream {
	case muxStdout:
		return paddock.EventStdout
	case muxStderr:
		return paddock.EventStderr
	}
	return 0
}

// maxFrame bounds one multiplexed frame (the engine sends at most 32 KiB).
const maxFrame = 1 << 20

// execSpec is one engine exec.
type execSpec struct {
	cmd   []string
	env   []string
	dir   string
	user  string // "" = the sandbox's user
	stdin bool
	tty   bool
	size  paddock.TermSize // with tty: the terminal's size
}

// attached is an exec whose streams are attached: read through reader
// (it may already hold bytes), write through conn.
type attached struct {
	id     string
	hj     client.HijackedResponse
	tty    bool
	reader *bufio.Reader
}

// startExec creates and starts an attached exec in the named sandbox.
func (a *Adapter) startExec(ctx context.Context, sandbox string, e execSpec) (*attached, error) {
	if err := utf8Only(e); err != nil {
		return nil, err
	}
	e.dir = cmp.Or(e.dir, workspace)
	gate := a.execGate(sandbox)
	gate.RLock()
	defer gate.RUnlock()
	res, err := a.engine.ExecCreate(ctx, containerName(sandbox), client.ExecCreateOptions{
		User: e.user, TTY: e.tty, AttachStdin: e.stdin, AttachStdout: true, AttachStderr: true,
		Env: e.env, WorkingDir: e.dir, Cmd: e.cmd,
		ConsoleSize: client.ConsoleSize{Height: uint(e.size.Rows), Width: uint(e.size.Cols)},
	})
	if err != nil {
		return nil, engineError("exec", err)
	}
	hj, err := a.engine.ExecAttach(ctx, res.ID, client.ExecAttachOptions{TTY: e.tty})
	if err != nil {
		return nil, engineError("exec attach", err)
	}
	// The engine answers the attach before it starts the process; hold
	// the gate until the process runs (or has already ended).
	a.awaitStart(ctx, res.ID)
	return &attached{id: res.ID, hj: hj.HijackedResponse, tty: e.tty, reader: hj.Reader}, nil
}

// awaitStart waits (up to startWait) until the engine reports the exec's
// process started: it has a pid, or has already exited. It asks at most
// startPoll apart: the exec's caller waits for the answer, so a longer
// pause is latency every exec pays (runc takes tens of milliseconds to
// start a process; at 20 ms apart the answer came about 10 ms late).
func (a *Adapter) awaitStart(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	for delay := 200 * time.Microsecond; ; delay = min(2*delay, startPoll) {
		in, err := a.engine.ExecInspect(ctx, id, client.ExecInspectOptions{})
		if err != nil || in.PID != 0 || (!in.Running && in.ExitCode != 0) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// startWait bounds awaitStart, and startPoll the pause between its asks.
const (
	startWait = 5 * time.Second
	startPoll = 4 * time.Millisecond
)

// close ends the attachment (the exec's process is not stopped by it).
func (x *attached) close() { x.hj.Close() }

// closeWrite ends the exec's stdin.
func (x *attached) closeWrite() error { return x.hj.CloseWrite() }

// next reads one chunk: a multiplexed frame, or raw bytes with a TTY
// (reported as stdout).
func (x *attached) next(buf []byte) (stream byte, data []byte, err error) {
	if x.tty {
		n, err := x.reader.Read(buf)
		return muxStdout, buf[:n], err
	}
	var header [8]byte
	if _, err := io.ReadFull(x.reader, header[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, nil, io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	size := binary.BigEndian.Uint32(header[4:])
	if size > maxFrame {
		return 0, nil, fmt.Errorf("docker exec stream: a frame of %d bytes", size)
	}
	data = make([]byte, size)
	if _, err := io.ReadFull(x.reader, data); err != nil {
		return 0, nil, io.ErrUnexpectedEOF
	}
	return header[0], data, nil
}

// exitCode waits for the exec to be reported finished and returns its
// code. The engine may still say running just after the stream ends.
func (a *Adapter) exitCode(id string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), engineWait)
	defer cancel()
	return a.exitCodeWithin(ctx, id)
}

// exitCodeWithin is exitCode bounded by ctx instead of engineWait.
func (a *Adapter) exitCodeWithin(ctx context.Context, id string) (int, error) {
	delay := time.Millisecond
	for {
		res, err := a.engine.ExecInspect(ctx, id, client.ExecInspectOptions{})
		if err != nil {
			return 0, engineError("exec inspect", err)
		}
		if !res.Running {
			return res.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return 0, &paddock.UnavailableError{Detail: "docker exec inspect: still running after its stream ended"}
		case <-time.After(delay):
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// output is what run collected.
type output struct {
	stdout, stderr []byte
	code           int
	// stdin is how many bytes of stdin reached the exec, and fed the
	// failure of the copy (nil: all of it, then its end).
	stdin int64
	fed   error
}

// maxCollected bounds what run keeps of each stream (internal commands
// print little; a file read streams instead).
const maxCollected = 16 << 20

// run executes e to completion, feeding stdin (if any), and collects its
// output and exit code. ctx bounds it: the attachment is closed when ctx
// ends.
func (a *Adapter) run(ctx context.Context, sandbox string, e execSpec, stdin io.Reader) (output, error) {
	e.stdin = stdin != nil
	x, err := a.startExec(ctx, sandbox, e)
	if err != nil {
		return output{}, err
	}
	out, err := collect(ctx, x, stdin, a.log)
	if err != nil {
		return output{}, err
	}
	if out.code, err = a.exitCode(x.id); err != nil {
		return output{}, err
	}
	return out, nil
}

// collect reads an exec's output to its end (the end of its output, which
// a process that lets go of it reaches before it exits), feeding stdin (if
// any), and closes the attachment. ctx bounds it.
func collect(ctx context.Context, x *attached, stdin io.Reader, log zerolog.Logger) (output, error) {
	defer x.close()
	stop := context.AfterFunc(ctx, x.close)
	defer stop()
	type fed struct {
		n   int64
		err error
	}
	copied := make(chan fed, 1)
	if stdin != nil {
		go func() {
			n, err := io.Copy(x.hj.Conn, stdin)
			if cerr := x.closeWrite(); err == nil {
				err = cerr
			}
			copied <- fed{n, err}
		}()
	} else {
		copied <- fed{}
	}
	out, errOut := capped{max: maxCollected}, capped{max: maxCollected}
	if err := pump(ctx, x, &out, &errOut); err != nil {
		return output{}, err
	}
	x.close()
	in := <-copied
	if in.err != nil && ctx.Err() == nil && !errors.Is(in.err, io.ErrClosedPipe) {
		log.Debug().Str("error", in.err.Error()).Msg("docker: copying stdin into an exec")
	}
	return output{stdout: out.Bytes(), stderr: errOut.Bytes(), stdin: in.n, fed: in.err}, nil
}

// pump reads x's output to its end: stdout into stdout, stderr and the
// engine's own messages into stderr. An ended ctx is ctx's error, a
// stream that breaks closed_before_exit, a writer's failure its own.
func pump(ctx context.Context, x *attached, stdout, stderr io.Writer) error {
	buf := make([]byte, 32<<10)
	for {
		stream, data, err := x.next(buf)
		if len(data) > 0 {
			w := stderr
			if stream == muxStdout {
				w = stdout
			}
			if _, werr := w.Write(data); werr != nil {
				return werr
			}
		}
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return ctxError(ctx)
		case errors.Is(err, io.EOF):
			return nil
		default:
			return &paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit + ": " + short(err.Error())}
		}
	}
}

// capped keeps what is written to it until it holds max bytes, and
// discards the rest.
type capped struct {
	bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if c.Len() < c.max {
		c.Buffer.Write(p)
	}
	return len(p), nil
}

// ctxError is the error of an ended context: a deadline is a timeout.
func ctxError(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &paddock.UnavailableError{Detail: paddock.DetailTimeout}
	}
	return &paddock.UnavailableError{Detail: "cancelled"}
}

// resize sets a TTY exec's terminal size. Engines before API 1.42 ignore
// the size given at creation, so a TTY is sized again once it runs.
func (a *Adapter) resize(ctx context.Context, execID string, size paddock.TermSize) error {
	_, err := a.engine.ExecResize(ctx, execID, client.ExecResizeOptions{Height: uint(size.Rows), Width: uint(size.Cols)})
	if err != nil {
		return engineError("exec resize", err)
	}
	return nil
}

// utf8Only refuses an exec the engine cannot carry exactly: its API is
// JSON, which turns bytes that are not UTF-8 into U+FFFD, so a command,
// path or variable holding them would reach the sandbox changed.
func utf8Only(e execSpec) error {
	texts := append(append([]string{e.dir}, e.cmd...), e.env...)
	for _, t := range texts {
		if !utf8.ValidString(t) {
			return &paddock.InvalidError{Detail: paddock.DetailCommand + ": the Docker engine carries commands, paths and environment as UTF-8 text, and this holds other bytes"}
		}
	}
	return nil
}
