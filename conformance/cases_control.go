package conformance

import (
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

// 30. With signal: a trapped USR1 reaches the live command and leaves it
// running and printing; INT then ends it with its own exit, 130; after the
// exit a signal is command_exited; a name outside the set is invalid.
func signalsReachTheCommand(t testing.TB, s *suite) {
	require.False(t, s.cfg.Fixtures.SignalTrap.Path == "", "the signal capability needs the SignalTrap fixture")
	ctx := s.ctx(t)
	h := s.fresh(t)
	st := s.spawn(t, h, s.cfg.Fixtures.SignalTrap, false)
	s.stdoutUntil(t, st, "ready")
	require.NoError(t, paddock.SignalCommand(ctx, s.a, st, paddock.SignalUsr1))
	s.stdoutUntil(t, st, "usr1")
	require.NoError(t, paddock.SignalCommand(ctx, s.a, st, paddock.SignalUsr1), "still running after a trapped USR1")
	s.stdoutUntil(t, st, "usr1")
	requireKind(t, paddock.SignalCommand(ctx, s.a, st, "BOGUS"), paddock.ErrInvalid, "a signal outside the set")
	require.NoError(t, paddock.SignalCommand(ctx, s.a, st, paddock.SignalInt))
	s.requireExit(t, st, 130)
	requireKind(t, paddock.SignalCommand(ctx, s.a, st, paddock.SignalTerm), paddock.ErrCommandExited, "a signal after the exit")
}

// 30 refused. Without signal, SignalCommand is not supported.
func signalsRefused(t testing.TB, s *suite) {
	h := s.fresh(t)
	st := s.spawn(t, h, s.cfg.Fixtures.SpawnStay, true)
	s.stdoutUntil(t, st, "ready")
	requireKind(t, paddock.SignalCommand(s.ctx(t), s.a, st, paddock.SignalInt), paddock.ErrNotSupported)
}

// 31. With resize (and tty): a TTY spawn starts at the size asked for, and
// after a resize the command sees the new size; a size out of bounds is
// invalid.
func terminalResizes(t testing.TB, s *suite) {
	require.False(t, s.cfg.Fixtures.TermSize.Path == "", "the resize capability needs the TermSize fixture")
	require.True(t, s.caps.Has(paddock.CapTTY), "resize needs tty")
	ctx := s.ctx(t)
	h := s.fresh(t)
	opts := s.cfg.SpawnOptions
	opts.TTY, opts.Stdin, opts.Name, opts.Detachable = true, true, "", false
	opts.Size = &paddock.TermSize{Cols: 120, Rows: 40}
	st, err := s.a.Spawn(ctx, h, s.cfg.Fixtures.TermSize, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	s.stdoutUntil(t, st, "40 120")
	require.NoError(t, paddock.ResizeTerminal(ctx, s.a, st, paddock.TermSize{Cols: 100, Rows: 30}))
	require.NoError(t, st.WriteStdin(ctx, []byte("size\n")))
	s.stdoutUntil(t, st, "30 100")
	requireKind(t, paddock.ResizeTerminal(ctx, s.a, st, paddock.TermSize{Cols: 100, Rows: 0}), paddock.ErrInvalid, "a size out of bounds")
	require.NoError(t, st.CloseStdin(ctx))
	s.requireExit(t, st, 0)
}

// 31 refused. Without resize, a size on a spawn and ResizeTerminal are not
// supported.
func terminalResizeRefused(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	opts := s.cfg.SpawnOptions
	opts.TTY, opts.Name, opts.Detachable, opts.Size = true, "", false, &paddock.TermSize{Cols: 80, Rows: 24}
	_, err := s.a.Spawn(ctx, h, s.cfg.Fixtures.SpawnOK, opts)
	requireKind(t, err, paddock.ErrNotSupported, "a spawn with a size")
	st := s.spawn(t, h, s.cfg.Fixtures.SpawnStay, true)
	s.stdoutUntil(t, st, "ready")
	requireKind(t, paddock.ResizeTerminal(ctx, s.a, st, paddock.TermSize{Cols: 80, Rows: 24}), paddock.ErrNotSupported)
}
