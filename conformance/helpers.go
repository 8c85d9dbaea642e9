package conformance

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

// ctx returns a context bounded by the operation timeout, cancelled when
// the case ends.
func (s *suite) ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.OperationTimeout)
	t.Cleanup(cancel)
	return ctx
}

// fresh creates a sandbox with a new name and destroys it when the case
// ends.
func (s *suite) fresh(t testing.TB) paddock.Handle {
	t.Helper()
	name := s.name()
	h, err := s.a.Create(s.ctx(t), name, paddock.CreateOpts{})
	require.NoError(t, err, "Create(%q)", name)
	s.destroyAtEnd(t, h)
	return h
}

// destroyAtEnd destroys h when the case ends, so no case leaks a machine.
func (s *suite) destroyAtEnd(t testing.TB, h paddock.Handle) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.OperationTimeout)
		defer cancel()
		if err := s.a.Destroy(ctx, h); err != nil {
			t.Errorf("cleanup: Destroy(%s): %v", h, err)
		}
	})
}

// spawn starts cmd with the configured options plus stdin, and closes the
// stream when the case ends.
func (s *suite) spawn(t testing.TB, h paddock.Handle, cmd paddock.Cmd, stdin bool) paddock.Stream {
	t.Helper()
	opts := s.cfg.SpawnOptions
	opts.Stdin = stdin
	opts.Name = ""
	st, err := s.a.Spawn(s.ctx(t), h, cmd, opts)
	require.NoError(t, err, "Spawn(%s)", cmd)
	require.NotNil(t, st, "Spawn returned no stream")
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// next waits up to the frame timeout for one event.
func (s *suite) next(t testing.TB, st paddock.Stream) paddock.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.FrameTimeout)
	defer cancel()
	ev, err := st.Next(ctx)
	require.NoError(t, err, "no event within %s", s.cfg.FrameTimeout)
	return ev
}

// nextStdout waits for the next stdout event, passing over stderr; a
// terminal event first is a failure.
func (s *suite) nextStdout(t testing.TB, st paddock.Stream) []byte {
	t.Helper()
	for {
		ev := s.next(t, st)
		switch ev.Kind {
		case paddock.EventStdout:
			require.NotEmpty(t, ev.Data, "a stdout event carries bytes")
			return ev.Data
		case paddock.EventStderr:
			continue
		default:
			require.Failf(t, "stdout expected", "got %s (code %d, err %v) before any stdout", ev.Kind, ev.Code, ev.Err)
		}
	}
}

// stdoutUntil collects stdout until it contains want; a terminal event
// first is a failure.
func (s *suite) stdoutUntil(t testing.TB, st paddock.Stream, want string) {
	t.Helper()
	var seen []byte
	for !bytes.Contains(seen, []byte(want)) {
		seen = append(seen, s.nextStdout(t, st)...)
	}
}

// terminal passes over output and returns the terminal event.
func (s *suite) terminal(t testing.TB, st paddock.Stream) paddock.Event {
	t.Helper()
	for {
		ev := s.next(t, st)
		if ev.Kind.Terminal() {
			return ev
		}
		require.Contains(t, []paddock.EventKind{paddock.EventStdout, paddock.EventStderr}, ev.Kind, "unknown event kind")
	}
}

// requireExit passes over output and requires the terminal event to be
// exit code.
func (s *suite) requireExit(t testing.TB, st paddock.Stream, code int) {
	t.Helper()
	ev := s.terminal(t, st)
	require.Equal(t, paddock.EventExit, ev.Kind, "terminal event is %s (err %v), want exit %d", ev.Kind, ev.Err, code)
	require.Equal(t, code, ev.Code)
}

// requireEnded requires the stream to yield nothing more: io.EOF, never
// another event (a stream that hangs instead fails after FrameTimeout).
func (s *suite) requireEnded(t testing.TB, st paddock.Stream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.FrameTimeout)
	defer cancel()
	ev, err := st.Next(ctx)
	if err == nil {
		require.Failf(t, "stream went on after its terminal event", "got %s (code %d, err %v)", ev.Kind, ev.Code, ev.Err)
	}
	require.ErrorIs(t, err, io.EOF, "after the terminal event Next answers io.EOF")
}

// requireKind requires err to be of the taxonomy kind of want.
func requireKind(t testing.TB, err, want error, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	require.Truef(t, errors.Is(err, want), "got %v (kind %q), want %v", err, paddock.KindOf(err), want)
}
