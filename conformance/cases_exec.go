package conformance

import (
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

// 10. Exec returns the output and exit 0.
func execOK(t testing.TB, s *suite) {
	h := s.fresh(t)
	f := s.cfg.Fixtures.ExecOK
	res, err := s.a.Exec(s.ctx(t), h, f.Cmd, paddock.ExecOpts{})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode)
	require.Contains(t, string(res.Output), f.Expect)
}

// 11. A nonzero exit is data, not an error.
func execFail(t testing.TB, s *suite) {
	h := s.fresh(t)
	f := s.cfg.Fixtures.ExecFail
	res, err := s.a.Exec(s.ctx(t), h, f.Cmd, paddock.ExecOpts{})
	require.NoError(t, err, "a nonzero exit is not an error")
	require.Equal(t, f.Code, res.ExitCode)
}
