package actors

import (
	"context"
	"io"
	"sync"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
)

// Files through the runtime's own transport are owned by their sandbox's
// actor, as commands are: the adapter's call runs on a goroutine of the
// runtime's (so a panic is an answer, never a crash), it ends when the
// sandbox is destroyed or the runtime stops, and nothing is held in memory
// beyond the adapter's own buffers: a write reads the caller's reader as
// the adapter asks for bytes, a read hands the caller a pipe fed from the
// adapter's reader as the caller reads.

// fileCall carries a WriteFileRequest or ReadFileRequest of the runtime's
// own transport to its sandbox actor, with what no message can carry: the
// caller's context, and the caller's reader or where the file's reader
// goes.
type fileCall struct {
	req    client.Request
	caller context.Context
	body   io.Reader // a write's content
	out    *handoff  // a read's reader
}

// errFenced is what an adapter reads from a caller's reader once the
// caller's WriteFile has returned.
var errFenced = &paddock.WriteFailedError{Detail: "the caller's WriteFile returned"}

// fencedReader is a caller's reader that nobody reads once fence returns;
// it keeps the reader's first failure, which no reply can carry.
type fencedReader struct {
	r      io.Reader
	mu     sync.Mutex
	fenced bool
	err    error // the caller's reader's first error but io.EOF
}

func (f *fencedReader) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fenced {
		return 0, errFenced
	}
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF && f.err == nil {
		f.err = err
	}
	return n, err
}

// fence waits for a read in progress, then refuses every later one.
func (f *fencedReader) fence() {
	f.mu.Lock()
	f.fenced = true
	f.mu.Unlock()
}

// handoff passes a file's reader from the sandbox actor to the caller
// waiting for it, once: a reader given after the caller took (or gave
// up) is refused, and its giver closes it.
type handoff struct {
	mu    sync.Mutex
	rc    io.ReadCloser
	taken bool
}

// give leaves rc for the caller; false when the caller is gone.
func (h *handoff) give(rc io.ReadCloser) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.taken {
		return false
	}
	h.rc = rc
	return true
}

// take is the reader given so far (nil: none), and refuses later ones.
func (h *handoff) take() io.ReadCloser {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.taken = true
	rc := h.rc
	h.rc = nil
	return rc
}

// bound is ctx ended also by the caller's context while it lives; its
// cancel must be called.
func bound(ctx, caller context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(caller, cancel)
	return ctx, func() { stop(); cancel() }
}

// writeStream writes a caller's reader into the file, bounded by the
// sandbox actor's life and the caller's context.
func (s *sandboxActor) writeStream(cl opCall, m *messages.WriteFileRequest) error {
	ctx, cancel := bound(cl.ctx, cl.file.caller)
	defer cancel()
	return s.a.WriteFile(ctx, cl.h, m.GetPath(), wire.FileModeFromMessage(m.GetMode()), cl.file.body)
}

// readStream opens the file (bounded by the caller's context too) and
// hands the caller a pipe that a goroutine of the runtime's feeds from the
// adapter's reader until it ends, the caller closes the pipe, or the
// sandbox actor stops.
func (s *sandboxActor) readStream(cl opCall, m *messages.ReadFileRequest) error {
	ctx, cancel := context.WithCancel(cl.ctx)
	opening := context.AfterFunc(cl.file.caller, cancel)
	rc, err := s.a.ReadFile(ctx, cl.h, m.GetPath())
	opening()
	if err != nil {
		cancel()
		return err
	}
	pr, pw := io.Pipe()
	if !cl.file.out.give(pr) {
		_ = pr.Close() // the caller gave up: the copy ends at its first write
	}
	s.rt.goTracked("reading "+m.GetPath()+" on "+s.key, func() {
		defer cancel()
		feed(ctx, rc, pw)
	})
	return nil
}

// feed copies rc into pw until either ends or ctx does, then closes both;
// a panic of the adapter's reader is the reader's error.
func feed(ctx context.Context, rc io.ReadCloser, pw *io.PipeWriter) {
	stop := context.AfterFunc(ctx, func() {
		_ = pw.CloseWithError(&paddock.UnavailableError{Detail: "reading the file: " + context.Cause(ctx).Error()})
	})
	defer stop()
	err := recovered(func() error {
		_, err := io.Copy(pw, rc)
		return err
	})
	_ = recovered(rc.Close)
	_ = pw.CloseWithError(err) // nil: the reader's io.EOF
}
