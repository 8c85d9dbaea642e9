package local

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// foreignPoll is how often a stream re-reads the journal of a session no
// adapter of this process supervises (another runtime's, still live).
const foreignPoll = 20 * time.Millisecond

// stream is one subscriber: it reads the session's journal from byte zero
// (the replay) and then as it grows (the tail), so nothing is lost or
// duplicated between the two.
type stream struct {
	s         *session // nil when this adapter does not supervise the session
	sessionID string
	dir       string // the session's directory
	stdin     bool

	mu       sync.Mutex // guards jr
	jr       *journalReader
	at       atomic.Int64 // jr.pos, for the session's tail
	finished bool
	closed   chan struct{}
	once     sync.Once
}

var _ paddock.Stream = (*stream)(nil)

// subscribe opens a new subscriber on the journal in dir.
func subscribe(s *session, dir, id string, stdin bool) (*stream, error) {
	jr, err := openJournal(filepath.Join(dir, journalFile))
	if err != nil {
		return nil, unavailable("opening the session journal", err)
	}
	st := &stream{s: s, sessionID: id, dir: dir, stdin: stdin, jr: jr, closed: make(chan struct{})}
	if s != nil {
		s.mu.Lock()
		if s.subscribers == nil {
			s.subscribers = map[*stream]struct{}{}
		}
		s.subscribers[st] = struct{}{}
		s.mu.Unlock()
	}
	return st, nil
}

// Next returns the next journal record as an event.
func (st *stream) Next(ctx context.Context) (paddock.Event, error) {
	for {
		ev, ok, wait, err := st.read()
		if err != nil || ok {
			return ev, err
		}
		select {
		case <-wait:
		case <-st.closed:
		case <-ctx.Done():
			return paddock.Event{}, ctx.Err()
		}
	}
}

// read returns the next event, or a channel that announces more.
func (st *stream) read() (ev paddock.Event, ok bool, wait <-chan struct{}, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.finished || st.jr == nil {
		return paddock.Event{}, false, nil, io.EOF
	}
	written, done, changed, broken := st.limit()
	kind, data, got, rerr := st.nextRecord(written)
	switch {
	case rerr != nil || (!got && broken != nil):
		st.finished = true
		return paddock.Failed(&paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit}), true, nil, nil
	case got:
		ev, derr := eventOf(kind, data)
		if derr != nil {
			st.finished = true
			return paddock.Failed(&paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit}), true, nil, nil
		}
		st.finished = ev.Kind.Terminal()
		return ev, true, nil, nil
	case done:
		// The terminal record was written but is not readable: unknown fate.
		st.finished = true
		return paddock.Failed(&paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit}), true, nil, nil
	}
	return paddock.Event{}, false, changed, nil
}

// nextRecord takes the next record, up to what is written, from the
// session's in-memory tail when it still holds it (a subscriber that keeps
// up), else from the journal file.
func (st *stream) nextRecord(written int64) (kind byte, data []byte, ok bool, err error) {
	defer func() { st.at.Store(st.jr.pos) }()
	if st.s != nil && st.jr.pos < written {
		if kind, data, disk, ok := st.s.fromTail(st.jr.pos); ok {
			st.jr.skipTo(st.jr.pos + int64(disk))
			return kind, data, true, nil
		}
	}
	return st.jr.next(written)
}

// limit is how far the journal may be read now: what of it is on disk.
func (st *stream) limit() (written int64, done bool, changed <-chan struct{}, broken error) {
	if st.s != nil {
		return st.s.snapshot()
	}
	info, err := st.jr.f.Stat()
	if err != nil {
		return 0, false, pollTick(), nil
	}
	return info.Size(), false, pollTick(), nil
}

// pollTick announces "look again" after foreignPoll.
func pollTick() <-chan struct{} {
	ch := make(chan struct{})
	time.AfterFunc(foreignPoll, func() { close(ch) })
	return ch
}

// WriteStdin writes p to the command's stdin.
func (st *stream) WriteStdin(ctx context.Context, p []byte) error {
	switch {
	case st.isClosed():
		return paddock.ErrCommandExited
	case st.s == nil:
		return st.notOurs()
	case st.s.isDone():
		return paddock.ErrCommandExited
	case !st.stdin:
		return &paddock.WriteFailedError{Detail: "stdin was not requested for this subscription"}
	}
	return st.s.writeStdin(ctx, p)
}

// signals maps the contract's signals to this system's.
var signals = map[paddock.Signal]syscall.Signal{
	paddock.SignalInt: syscall.SIGINT, paddock.SignalTerm: syscall.SIGTERM, paddock.SignalHup: syscall.SIGHUP,
	paddock.SignalKill: syscall.SIGKILL, paddock.SignalQuit: syscall.SIGQUIT, paddock.SignalUsr1: stubproc.SIGUSR1,
	paddock.SignalUsr2: stubproc.SIGUSR2,
}

// Signal sends sig to the command's process group (KILL reaches its
// whole cgroup leaf too, as root). A session another runtime supervises is
// signalled through its record.
func (st *stream) Signal(_ context.Context, sig paddock.Signal) error {
	s, ok := signals[sig]
	switch {
	case !ok:
		return sig.Validate()
	case st.isClosed():
		return paddock.ErrCommandExited
	case st.s == nil:
		if _, err := os.Stat(filepath.Join(st.dir, doneFile)); err == nil {
			return paddock.ErrCommandExited
		}
		rec, err := readRecord(st.dir)
		if err != nil {
			return unavailable("signal", err)
		}
		signalAll(rec.members(), s)
		return nil
	case st.s.isDone():
		return paddock.ErrCommandExited
	}
	st.s.signal(s)
	return nil
}

// Resize sets the terminal's size; the command's foreground process group
// gets SIGWINCH.
func (st *stream) Resize(_ context.Context, size paddock.TermSize) error {
	switch {
	case st.isClosed():
		return paddock.ErrCommandExited
	case st.s == nil:
		return &paddock.WriteFailedError{Detail: "the terminal is held by the runtime that started the session"}
	case st.s.isDone():
		return paddock.ErrCommandExited
	case !st.s.rec.TTY:
		return &paddock.InvalidError{Detail: paddock.DetailTermSize + ": the command has no terminal"}
	}
	if err := setSize(st.s.proc.stdout, size); err != nil {
		if errors.Is(err, os.ErrClosed) || st.s.isDone() { // the terminal closes as the command ends
			return paddock.ErrCommandExited
		}
		return &paddock.WriteFailedError{Detail: "resize: " + err.Error()}
	}
	return nil
}

// CloseStdin sends EOF (in tty mode, the end-of-file character).
func (st *stream) CloseStdin(context.Context) error {
	switch {
	case st.isClosed():
		return paddock.ErrCommandExited
	case st.s == nil:
		if errors.Is(st.notOurs(), paddock.ErrCommandExited) {
			return nil // closing stdin of an exited command is ok
		}
		return st.notOurs()
	}
	return st.s.closeStdin()
}

// notOurs answers stdin calls on a session this adapter does not
// supervise: finished, it has exited; else another runtime holds its stdin.
func (st *stream) notOurs() error {
	if _, err := os.Stat(filepath.Join(st.dir, doneFile)); err == nil {
		return paddock.ErrCommandExited
	}
	return &paddock.WriteFailedError{Detail: "stdin is held by the runtime that started the session"}
}

// Close detaches this subscriber; the command keeps running.
func (st *stream) Close() error {
	st.once.Do(func() {
		close(st.closed)
		if st.s != nil {
			st.s.mu.Lock()
			delete(st.s.subscribers, st)
			st.s.mu.Unlock()
		}
		st.mu.Lock()
		_ = st.jr.close()
		st.jr = nil
		st.mu.Unlock()
	})
	return nil
}

func (st *stream) isClosed() bool {
	select {
	case <-st.closed:
		return true
	default:
		return false
	}
}

// SessionID is the session's id.
func (st *stream) SessionID() string { return st.sessionID }

// eotByte is what "closing stdin" writes in tty mode (Ctrl-D).
const eotByte = 0x04

// writeStdin writes to the command's stdin, in order, honouring ctx.
func (s *session) writeStdin(ctx context.Context, p []byte) error {
	s.stdinMu.Lock()
	defer s.stdinMu.Unlock()
	switch {
	case s.isDone():
		return paddock.ErrCommandExited
	case s.proc.stdin == nil:
		return &paddock.WriteFailedError{Detail: "the command was started without stdin"}
	case s.stdinEOF:
		return &paddock.WriteFailedError{Detail: "stdin was closed"}
	}
	w := s.proc.stdin
	if d, ok := ctx.Deadline(); ok {
		_ = w.SetWriteDeadline(d)
		defer w.SetWriteDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { _ = w.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	_, err := w.Write(p)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) || s.isDone():
		return paddock.ErrCommandExited
	case ctx.Err() != nil:
		return &paddock.WriteFailedError{Detail: "write cancelled: " + ctx.Err().Error()}
	}
	return &paddock.WriteFailedError{Detail: err.Error()}
}

// closeStdin sends EOF once; after the exit it is a no-op.
func (s *session) closeStdin() error {
	s.stdinMu.Lock()
	defer s.stdinMu.Unlock()
	if s.isDone() || s.stdinEOF || s.proc.stdin == nil {
		return nil
	}
	s.stdinEOF = true
	if s.rec.TTY {
		_, _ = s.proc.stdin.Write([]byte{eotByte})
		return nil
	}
	_ = s.proc.stdin.Close()
	return nil
}

func (s *session) isDone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// Spawn starts cmd as a detachable session journaled on disk and returns
// its first subscriber. With opts.Name set and a live session of that name
// in the sandbox, it attaches to that session instead.
func (a *Adapter) Spawn(_ context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts) (paddock.Stream, error) {
	if err := paddock.ValidateSpawn(a, cmd, opts); err != nil {
		return nil, err
	}
	m, err := a.readMeta(h.Name)
	if err != nil {
		return nil, err
	}
	spec, err := a.spec(m, cmd, opts.Stdin || opts.Name != "", opts.TTY)
	if err != nil {
		return nil, err
	}
	if opts.Size != nil {
		spec.size = *opts.Size
	}
	sbDir := a.dirOf(h.Name)
	if opts.Name != "" {
		unlock := a.lockName(sbDir + "/" + opts.Name)
		defer unlock()
		for _, s := range a.live(sbDir) {
			if s.rec.Name == opts.Name && !s.isDone() {
				return subscribe(s, s.dir, s.rec.ID, true)
			}
		}
	}
	s, err := a.startSession(sbDir, m, opts.Name, cmd, spec)
	if err != nil {
		return nil, err
	}
	return subscribe(s, s.dir, s.rec.ID, opts.Stdin || opts.Name != "")
}
