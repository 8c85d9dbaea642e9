package paddock_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExecLimitsTimeout(t *testing.T) {
	t.Parallel()
	d := paddock.Duration
	for name, tc := range map[string]struct {
		limits    paddock.ExecLimits
		requested *time.Duration
		want      *time.Duration
	}{
		"no limits, none requested":             {paddock.ExecLimits{}, nil, nil},
		"no limits, an hour requested":          {paddock.ExecLimits{}, d(time.Hour), d(time.Hour)},
		"the default when none is requested":    {paddock.ExecLimits{DefaultTimeout: time.Minute}, nil, d(time.Minute)},
		"a request beats the default":           {paddock.ExecLimits{DefaultTimeout: time.Minute}, d(time.Hour), d(time.Hour)},
		"a request under the ceiling":           {paddock.ExecLimits{MaxTimeout: time.Minute}, d(time.Second), d(time.Second)},
		"a request over the ceiling is clamped": {paddock.ExecLimits{MaxTimeout: time.Minute}, d(time.Hour), d(time.Minute)},
		"no request, no default: the ceiling":   {paddock.ExecLimits{MaxTimeout: time.Minute}, nil, d(time.Minute)},
		"zero stays zero":                       {paddock.ExecLimits{DefaultTimeout: time.Second, MaxTimeout: time.Minute}, d(0), d(0)},
		"default and ceiling":                   {paddock.ExecLimits{DefaultTimeout: time.Second, MaxTimeout: time.Minute}, nil, d(time.Second)},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, tc.limits.Timeout(tc.requested))
		})
	}
}

func TestExecLimitsValidate(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		limits paddock.ExecLimits
		ok     bool
	}{
		"none":                       {paddock.ExecLimits{}, true},
		"both":                       {paddock.ExecLimits{DefaultTimeout: time.Second, MaxTimeout: time.Minute}, true},
		"a negative default":         {paddock.ExecLimits{DefaultTimeout: -1}, false},
		"a negative ceiling":         {paddock.ExecLimits{MaxTimeout: -1}, false},
		"a default over the ceiling": {paddock.ExecLimits{DefaultTimeout: time.Hour, MaxTimeout: time.Minute}, false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := tc.limits.Validate()
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, paddock.ErrInvalid)
			assert.Contains(t, err.Error(), paddock.DetailExecOptions)
			_, _, err = paddock.StartExec(paddock.NewCmd("true"), paddock.ExecOpts{}, tc.limits, nil)
			require.ErrorIs(t, err, paddock.ErrInvalid, "an exec under invalid limits is invalid")
		})
	}
}

func TestStartExecAppliesTheLimits(t *testing.T) {
	t.Parallel()
	limits := paddock.ExecLimits{MaxTimeout: time.Minute}
	dl, out, err := paddock.StartExec(paddock.NewCmd("true"), paddock.ExecOpts{Timeout: paddock.Duration(time.Hour)}, limits, nil)
	require.NoError(t, err)
	assert.True(t, dl.Finite())
	assert.LessOrEqual(t, dl.Remaining(), time.Minute, "the deadline is the ceiling's")
	assert.Equal(t, paddock.Duration(time.Minute), out.Result(0).Timeout, "the clamp is visible in the result")
	var et *paddock.ExecTimeoutError
	require.ErrorAs(t, dl.Err(), &et)
	assert.Equal(t, time.Minute, et.Timeout, "the timeout error reports the timeout the exec ran under")
}

func TestExecOutput(t *testing.T) {
	t.Parallel()
	out, err := []byte("out"), []byte("err")
	for name, tc := range map[string]struct {
		opts       paddock.ExecOpts
		wantStdout string
		wantStderr string
	}{
		"apart":  {paddock.ExecOpts{}, "out|out", "err"},
		"merged": {paddock.ExecOpts{StderrToStdout: true}, "out|errout", ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, o, e := paddock.StartExec(paddock.NewCmd("true"), tc.opts, paddock.ExecLimits{}, nil)
			require.NoError(t, e)
			for _, step := range []struct {
				kind paddock.EventKind
				data []byte
			}{{paddock.EventStdout, out}, {paddock.EventStdout, []byte("|")}, {paddock.EventStderr, err}, {paddock.EventExit, []byte("ignored")}, {paddock.EventStdout, out}} {
				require.NoError(t, o.Add(step.kind, step.data))
			}
			res := o.Result(7)
			assert.Equal(t, tc.wantStdout, string(res.Stdout))
			assert.Equal(t, tc.wantStderr, string(res.Stderr))
			assert.Equal(t, 7, res.ExitCode)
			assert.Nil(t, res.Timeout)
		})
	}
}

// The cap counts stdout and stderr together and is inclusive; one byte
// more is the typed error, and what was held is released.
func TestExecOutputCap(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		chunks  []int // sizes, alternating stdout and stderr
		maxOut  int64
		wantErr bool
	}{
		"exactly the cap":        {[]int{600, 400}, 1000, false},
		"one byte over":          {[]int{600, 401}, 1000, true},
		"one chunk over":         {[]int{1001}, 1000, true},
		"many small chunks fit":  {[]int{1, 2, 3, 4, 990}, 1000, false},
		"the default cap is big": {[]int{1 << 20, 1 << 20}, 0, false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, o, err := paddock.StartExec(paddock.NewCmd("true"), paddock.ExecOpts{MaxOutput: tc.maxOut}, paddock.ExecLimits{}, nil)
			require.NoError(t, err)
			var addErr error
			for i, n := range tc.chunks {
				kind := paddock.EventStdout
				if i%2 == 1 {
					kind = paddock.EventStderr
				}
				if addErr = o.Add(kind, bytes.Repeat([]byte{'x'}, n)); addErr != nil {
					break
				}
			}
			if !tc.wantErr {
				require.NoError(t, addErr)
				res := o.Result(0)
				total := 0
				for _, n := range tc.chunks {
					total += n
				}
				assert.Equal(t, total, len(res.Stdout)+len(res.Stderr))
				if tc.maxOut > 0 {
					assert.LessOrEqual(t, int64(cap(res.Stdout)+cap(res.Stderr)), tc.maxOut+1024, "buffers never grow far past the cap")
				}
				return
			}
			require.ErrorIs(t, addErr, paddock.ErrExecOutputLimit)
			require.ErrorIs(t, addErr, paddock.ErrInvalid)
			assert.False(t, paddock.IsTransient(addErr), "the same request would fail the same way")
			assert.Zero(t, o.Len(), "what was held is released")
			require.ErrorIs(t, o.Add(paddock.EventStdout, []byte("x")), paddock.ErrExecOutputLimit, "and stays refused")
		})
	}
}

func TestExecOptsValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, paddock.ExecOpts{MaxOutput: 1}.Validate())
	require.ErrorIs(t, paddock.ExecOpts{MaxOutput: -1}.Validate(), paddock.ErrInvalid)
	assert.Equal(t, int64(paddock.DefaultExecMaxOutput), paddock.ExecOpts{}.OutputCap())
	assert.Equal(t, int64(5), paddock.ExecOpts{MaxOutput: 5}.OutputCap())
}
