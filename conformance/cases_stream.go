package conformance

import (
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

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
