package conformance

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

// 17. A second subscriber attaching to a live session first sees the very
// first chunk the original saw, byte for byte, then live output written
// through the original.
func attachReplays(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	original := s.spawn(t, h, s.cfg.Fixtures.SpawnStay, true)
	first := s.nextStdout(t, original)

	sessions, err := s.a.ListSessions(ctx, h)
	require.NoError(t, err)
	require.NotEmpty(t, sessions, "a spawned command is a listed session")
	attacher, err := s.a.Attach(ctx, h, sessions[0].ID, paddock.AttachOpts{Stdin: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = attacher.Close() })

	require.Equal(t, first, s.nextStdout(t, attacher), "the replay starts with the original's first chunk")
	require.NoError(t, original.WriteStdin(ctx, []byte("after-attach\n")))
	s.stdoutUntil(t, original, "after-attach")
	s.stdoutUntil(t, attacher, "after-attach")
	require.NoError(t, attacher.Close())
}

// 17 refused. Without attach, sessions are not supported.
func sessionsRefused(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	_, err := s.a.ListSessions(ctx, h)
	requireKind(t, err, paddock.ErrNotSupported, "ListSessions without attach")
	_, err = s.a.Attach(ctx, h, "no-such-session", paddock.AttachOpts{})
	requireKind(t, err, paddock.ErrNotSupported, "Attach without attach")
}

// terminateTimeout is min(frame timeout, 30s) in whole milliseconds.
func (s *suite) terminateTimeout() *time.Duration {
	d := min(s.cfg.FrameTimeout, paddock.MaxTerminateTimeout).Truncate(time.Millisecond)
	return paddock.Duration(max(d, time.Millisecond))
}

// 18. Terminating a detached session succeeds twice and leaves the sandbox
// usable.
func terminateKeepsSandbox(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	st := s.spawn(t, h, s.cfg.Fixtures.SpawnStay, true)
	s.nextStdout(t, st)
	sessions, err := s.a.ListSessions(ctx, h)
	require.NoError(t, err)
	require.Len(t, sessions, 1)
	require.NoError(t, st.Close())

	opts := paddock.TerminateOpts{Timeout: s.terminateTimeout()}
	require.NoError(t, paddock.TerminateSession(ctx, s.a, h, sessions[0].ID, opts))
	require.NoError(t, paddock.TerminateSession(ctx, s.a, h, sessions[0].ID, opts), "termination is idempotent")
	_, err = s.a.Get(ctx, h)
	require.NoError(t, err, "the sandbox survives")
	res, err := s.a.Exec(ctx, h, s.cfg.Fixtures.ExecOK.Cmd, paddock.ExecOpts{})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode)
	require.Contains(t, string(res.Stdout), s.cfg.Fixtures.ExecOK.Expect)
}

// 18 refused. Without terminate_session the facade refuses, valid input or
// not supported.
func terminateRefused(t testing.TB, s *suite) {
	h := s.fresh(t)
	err := paddock.TerminateSession(s.ctx(t), s.a, h, "some-session", paddock.TerminateOpts{})
	requireKind(t, err, paddock.ErrNotSupported)
}

// 18f. Force mode kills a live session (its subscriber gets one terminal
// event) and is uncertain for an id that does not exist.
func forceTerminate(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	st := s.spawn(t, h, s.cfg.Fixtures.SpawnStay, true)
	s.nextStdout(t, st)
	opts := paddock.TerminateOpts{Timeout: s.terminateTimeout(), Mode: paddock.TerminateForce}
	require.NoError(t, paddock.TerminateSession(ctx, s.a, h, st.SessionID(), opts))
	ev := s.terminal(t, st)
	require.True(t, ev.Kind.Terminal())
	s.requireEnded(t, st)

	err := paddock.TerminateSession(ctx, s.a, h, "no-such-session", opts)
	requireKind(t, err, paddock.ErrTerminationUnconfirmed, "force on an unknown id is uncertain")
}

// 18f refused. Force mode without force_terminate_session is not supported,
// and the adapter is not asked.
func forceTerminateRefused(t testing.TB, s *suite) {
	h := s.fresh(t)
	err := paddock.TerminateSession(s.ctx(t), s.a, h, "some-session", paddock.TerminateOpts{Mode: paddock.TerminateForce})
	requireKind(t, err, paddock.ErrNotSupported)
}

// 22. A spawn named after a live session returns that session, replaying
// its output, instead of starting a second command.
func namedSpawn(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	opts := s.cfg.SpawnOptions
	opts.Stdin, opts.Name = true, "conformance-named"
	st, err := s.a.Spawn(ctx, h, s.cfg.Fixtures.SpawnStay, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	first := s.nextStdout(t, st)
	require.NotEmpty(t, st.SessionID(), "a named spawn is a session")

	again, err := s.a.Spawn(ctx, h, s.cfg.Fixtures.SpawnStay, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = again.Close() })
	require.Equal(t, st.SessionID(), again.SessionID(), "the live session is returned")
	require.Equal(t, first, s.nextStdout(t, again), "it replays from the start")

	sessions, err := s.a.ListSessions(ctx, h)
	require.NoError(t, err)
	require.Len(t, sessions, 1, "no second command was started")

	require.NoError(t, again.WriteStdin(ctx, []byte("via-second\n")))
	s.stdoutUntil(t, st, "via-second")
}

// 22 refused. A named spawn without named_spawn is not supported: the name
// is never silently ignored.
func namedSpawnRefused(t testing.TB, s *suite) {
	h := s.fresh(t)
	opts := s.cfg.SpawnOptions
	opts.Name = "conformance-named"
	st, err := s.a.Spawn(s.ctx(t), h, s.cfg.Fixtures.SpawnStay, opts)
	if err == nil {
		_ = st.Close()
	}
	requireKind(t, err, paddock.ErrNotSupported)
}
