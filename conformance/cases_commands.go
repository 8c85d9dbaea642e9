package conformance

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/heavy"
	"github.com/stretchr/testify/require"
)

// 10. Exec returns the output and exit 0.
func execOK(t testing.TB, s *suite) {
	h := s.fresh(t)
	f := s.cfg.Fixtures.ExecOK
	res, err := s.a.Exec(s.ctx(t), h, f.Cmd, paddock.ExecOpts{})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode)
	require.Contains(t, string(res.Stdout), f.Expect)
}

// 11. A nonzero exit is data, not an error.
func execFail(t testing.TB, s *suite) {
	h := s.fresh(t)
	f := s.cfg.Fixtures.ExecFail
	res, err := s.a.Exec(s.ctx(t), h, f.Cmd, paddock.ExecOpts{})
	require.NoError(t, err, "a nonzero exit is not an error")
	require.Equal(t, f.Code, res.ExitCode)
}

// 27. Exec keeps stderr apart from stdout, or merges it into stdout.
func execSplitsOrMerges(t testing.TB, s *suite) {
	h := s.fresh(t)
	f := s.cfg.Fixtures.ExecSplit
	require.NotEmpty(t, f.Cmd.Path, "Fixtures.ExecSplit is required")
	res, err := s.a.Exec(s.ctx(t), h, f.Cmd, paddock.ExecOpts{})
	require.NoError(t, err)
	assert.Equal(t, f.Stdout, string(res.Stdout), "stdout alone")
	assert.Equal(t, f.Stderr, string(res.Stderr), "stderr apart")
	assert.Equal(t, f.Code, res.ExitCode)

	merged, err := s.a.Exec(s.ctx(t), h, f.Cmd, paddock.ExecOpts{StderrToStdout: true})
	require.NoError(t, err)
	assert.Contains(t, string(merged.Stdout), f.Stdout)
	assert.Contains(t, string(merged.Stdout), f.Stderr)
	assert.Len(t, merged.Stdout, len(f.Stdout)+len(f.Stderr), "both, each once")
	assert.Empty(t, merged.Stderr, "merged stderr is not repeated apart")
	assert.Equal(t, f.Code, merged.ExitCode)
}

// 28. Exec holds at most MaxOutput bytes: exactly the cap is a result, one
// byte less is invalid(exec_output_limit), a command printing without end
// (on stdout or stderr) is stopped there, and the sandbox stays usable.
func execOutputCap(t testing.TB, s *suite) {
	h := s.fresh(t)
	f := s.cfg.Fixtures.ExecBulk
	size := int64(len(f.Output))
	res, err := s.a.Exec(s.ctx(t), h, f.Cmd, paddock.ExecOpts{MaxOutput: size})
	require.NoError(t, err, "output of exactly the cap")
	require.Equal(t, f.Output, res.Stdout)

	_, err = s.a.Exec(s.ctx(t), h, f.Cmd, paddock.ExecOpts{MaxOutput: size - 1})
	require.ErrorIs(t, err, paddock.ErrExecOutputLimit, "one byte over the cap: %v", err)
	require.ErrorIs(t, err, paddock.ErrInvalid)

	_, err = s.a.Exec(s.ctx(t), h, f.Cmd, paddock.ExecOpts{MaxOutput: -1})
	require.ErrorIs(t, err, paddock.ErrInvalid, "a negative cap")

	// A command that prints without end is stopped at the cap, with no
	// timeout to end it otherwise.
	for _, endless := range s.cfg.Fixtures.Endless {
		_, err = s.a.Exec(s.ctx(t), h, endless, paddock.ExecOpts{MaxOutput: 64 << 10})
		require.ErrorIs(t, err, paddock.ErrExecOutputLimit, "%v prints without end: %v", endless.Args, err)
	}

	ok := s.cfg.Fixtures.ExecOK
	after, err := s.a.Exec(s.ctx(t), h, ok.Cmd, paddock.ExecOpts{})
	require.NoError(t, err, "the sandbox is still usable")
	require.Contains(t, string(after.Stdout), ok.Expect)
}

// 12. Output, then exit 0, then nothing more.
func spawnOneTerminal(t testing.TB, s *suite) {
	h := s.fresh(t)
	st := s.spawn(t, h, s.cfg.Fixtures.SpawnOK, false)
	s.nextStdout(t, st)
	s.requireExit(t, st, 0)
	s.requireEnded(t, st)
}

// 13. A transport that closes without an exit is an error event, never an
// exit, and nothing follows it.
func spawnDropIsError(t testing.TB, s *suite) {
	h := s.fresh(t)
	st := s.spawn(t, h, *s.cfg.Fixtures.SpawnDrop, false)
	s.nextStdout(t, st)
	ev := s.terminal(t, st)
	require.Equal(t, paddock.EventError, ev.Kind, "a close without an exit must not read as exit %d", ev.Code)
	require.Error(t, ev.Err, "an error event carries its error")
	s.requireEnded(t, st)
}

// 14. WriteStdin after the exit answers exactly command_exited.
func writeAfterExit(t testing.TB, s *suite) {
	h := s.fresh(t)
	st := s.spawn(t, h, s.cfg.Fixtures.SpawnOK, true)
	s.requireExit(t, st, 0)
	err := st.WriteStdin(s.ctx(t), []byte("late\n"))
	requireKind(t, err, paddock.ErrCommandExited, "WriteStdin after exit")
}

// 15. Written stdin comes back as stdout; closing stdin ends the command
// with exit 0.
func stdinRoundTrip(t testing.TB, s *suite) {
	h := s.fresh(t)
	st := s.spawn(t, h, s.cfg.Fixtures.SpawnStay, true)
	s.nextStdout(t, st)
	require.NoError(t, st.WriteStdin(s.ctx(t), []byte("ping\n")))
	s.stdoutUntil(t, st, "ping")
	require.NoError(t, st.CloseStdin(s.ctx(t)))
	s.requireExit(t, st, 0)
	s.requireEnded(t, st)
}

// 16. StopCommand (Close) succeeds, twice, and the stream then yields
// nothing, not even a terminal event.
func stopIsTotal(t testing.TB, s *suite) {
	h := s.fresh(t)
	st := s.spawn(t, h, s.cfg.Fixtures.SpawnStay, true)
	require.NoError(t, st.Close())
	require.NoError(t, st.Close())
	s.requireEnded(t, st)
	requireKind(t, st.WriteStdin(s.ctx(t), []byte("x")), paddock.ErrCommandExited, "WriteStdin after StopCommand")
}

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

// 35. A listing says where each session is: a live one runs, and one
// that ended, while it is still listed, says the end its subscriber got
// (the exit and its code, or the error), never running again.
func sessionsSayHowTheyEnded(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	live := s.spawn(t, h, s.cfg.Fixtures.SpawnStay, true)
	s.nextStdout(t, live)
	type ending struct {
		st  paddock.Stream
		end paddock.Event // the terminal event its subscriber got
	}
	cmds := []paddock.Cmd{s.cfg.Fixtures.ExecFail.Cmd, s.cfg.Fixtures.SpawnOK}
	if s.cfg.Fixtures.SpawnDrop != nil {
		cmds = append(cmds, *s.cfg.Fixtures.SpawnDrop)
	}
	var ended []ending
	for _, cmd := range cmds {
		st := s.spawn(t, h, cmd, false)
		ended = append(ended, ending{st, s.terminal(t, st)})
	}

	listed := s.sessions(t, h)
	require.Contains(t, listed, live.SessionID(), "a live session is listed")
	s.requireState(t, listed[live.SessionID()], paddock.SessionRunning, nil)
	for _, e := range ended {
		if got, ok := listed[e.st.SessionID()]; ok {
			s.requireState(t, got, "", &e.end)
		}
	}

	require.NoError(t, live.CloseStdin(ctx))
	end := s.terminal(t, live)
	if got, ok := s.sessions(t, h)[live.SessionID()]; ok {
		s.requireState(t, got, "", &end)
	}
}

// sessions lists the sandbox's sessions by id.
func (s *suite) sessions(t testing.TB, h paddock.Handle) map[string]paddock.Session {
	t.Helper()
	list, err := s.a.ListSessions(s.ctx(t), h)
	require.NoError(t, err)
	out := map[string]paddock.Session{}
	for _, got := range list {
		out[got.ID] = got
	}
	return out
}

// requireState requires a listed session to be in state, or, with end, to
// have ended as that terminal event says. With UnknownSessionStates the
// adapter claims no state at all.
func (s *suite) requireState(t testing.TB, got paddock.Session, state paddock.SessionState, end *paddock.Event) {
	t.Helper()
	want := paddock.Session{State: state}
	if end != nil {
		want.Ended(*end)
	}
	if s.cfg.UnknownSessionStates {
		want = paddock.Session{}
	}
	require.Equal(t, want.State, got.State, "the state of session %s (%s)", got.ID, got.Command)
	require.Equal(t, want.ExitCode, got.ExitCode, "the exit code of session %s", got.ID)
	require.Equal(t, want.Failure, got.Failure, "the failure of session %s", got.ID)
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
// its output, instead of starting a second command; spawns of one name at
// once start one session.
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
	assert.Equal(t, opts.Name, sessions[0].Name, "a session lists the name it was spawned with")

	require.NoError(t, again.WriteStdin(ctx, []byte("via-second\n")))
	s.stdoutUntil(t, st, "via-second")

	// Spawns of one new name at once start one session between them.
	opts.Name = "conformance-race"
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := s.a.Spawn(ctx, h, s.cfg.Fixtures.SpawnStay, opts)
			if assert.NoError(t, err) {
				ids[i] = st.SessionID()
				t.Cleanup(func() { _ = st.Close() }) // open until every spawn has answered
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		assert.Equal(t, ids[0], id, "one session for racing spawns of one name")
	}
	sessions, err = s.a.ListSessions(ctx, h)
	require.NoError(t, err)
	require.Len(t, sessions, 2, "the racing spawns started one command")
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

// 38. With tty and attach: a detachable terminal is one that outlives a
// detach and attaches again, its replay showing what it printed (the
// bytes, or a screen drawn from them); a provider that cannot attach a
// terminal again refuses the spawn as invalid instead of taking it.
func terminalReattaches(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	opts := s.cfg.SpawnOptions
	opts.TTY, opts.Stdin, opts.Name, opts.Detachable, opts.Size = true, true, "", true, nil
	st, err := s.a.Spawn(ctx, h, s.cfg.Fixtures.SpawnStay, opts)
	if err != nil {
		requireKind(t, err, paddock.ErrInvalid, "a detachable terminal the provider cannot attach again")
		return
	}
	t.Cleanup(func() { _ = st.Close() })
	id := st.SessionID()
	require.NotEmpty(t, id, "a detachable spawn is a session")
	s.stdoutUntil(t, st, "ready")
	require.NoError(t, st.WriteStdin(ctx, []byte("typed-before\r")))
	s.stdoutUntil(t, st, "typed-before")
	require.NoError(t, st.Close())
	again, err := s.a.Attach(ctx, h, id, paddock.AttachOpts{Stdin: true})
	require.NoError(t, err, "a detachable terminal attaches again")
	t.Cleanup(func() { _ = again.Close() })
	s.stdoutUntil(t, again, "typed-before")
	require.NoError(t, again.WriteStdin(ctx, []byte("typed-after\r")))
	s.stdoutUntil(t, again, "typed-after")
}

// 24. Many agent turns at once lose nothing: every Exec and Spawn returns
// exactly its command's bytes and one terminal event, and every sandbox is
// gone afterwards. The case holds the machine's heavy lock while it runs,
// so the load cases of test binaries running at once take turns instead of
// starving each other.
func nothingLostUnderLoad(t testing.TB, s *suite) {
	f := s.cfg.Fixtures
	require.False(t, f.ExecBulk.Cmd.Path == "" || f.SpawnBulk.Cmd.Path == "",
		"the load case needs Fixtures.ExecBulk and Fixtures.SpawnBulk")
	heavy.Lock(t)
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Load.Timeout)
	defer cancel()
	a := s.a
	if s.cfg.loadAdapter != nil {
		a = s.cfg.loadAdapter
	}
	report := RunLoad(ctx, a, f, s.cfg.SpawnOptions, s.cfg.Load.Turns, s.name)
	t.Logf("load: %s", report)
	require.Zero(t, report.Failed, "turns went wrong: %s", report)
	require.Empty(t, report.LeftBehind, "sandboxes left behind: %s", report)
}

// 34. A program that cannot run is data, as every shell says it: 127 for
// one that does not exist, 126 for a file that is not executable or a
// directory, with the reason on stderr and nothing on stdout; through
// Spawn the exit frame carries the same code.
func programsThatCannotRun(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	// A file of the sandbox's, named from its directory: the one path a
	// command and the file calls agree on everywhere (on the local adapter
	// a command's absolute paths are the machine's).
	require.NoError(t, s.a.WriteFile(ctx, h, "/tmp/conformance-programs/not-executable", 0o644, bytes.NewReader([]byte("echo never\n"))))
	notExecutable := paddock.NewCmd("./not-executable")
	notExecutable.Dir = "/tmp/conformance-programs"
	for _, tc := range []struct {
		cmd  paddock.Cmd
		code int
	}{
		{paddock.NewCmd("paddock-conformance-no-such-program"), 127},
		{paddock.NewCmd("/tmp/paddock-conformance-absent/program"), 127},
		{notExecutable, 126},
		{paddock.NewCmd("/tmp"), 126},
	} {
		res, err := s.a.Exec(ctx, h, tc.cmd, paddock.ExecOpts{})
		require.NoError(t, err, "%s cannot run: that is data", tc.cmd.Path)
		require.Equal(t, tc.code, res.ExitCode, "%s", tc.cmd.Path)
		require.Empty(t, res.Stdout, "%s: nothing on stdout", tc.cmd.Path)
		require.NotEmpty(t, res.Stderr, "%s: the reason on stderr", tc.cmd.Path)
	}
	st := s.spawn(t, h, paddock.NewCmd("paddock-conformance-no-such-program"), false)
	s.requireExit(t, st, 127)
}
