package conformance

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
// byte less is invalid(exec_output_limit), and the sandbox stays usable.
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

	ok := s.cfg.Fixtures.ExecOK
	after, err := s.a.Exec(s.ctx(t), h, ok.Cmd, paddock.ExecOpts{})
	require.NoError(t, err, "the sandbox is still usable")
	require.Contains(t, string(after.Stdout), ok.Expect)
}
