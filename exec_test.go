package paddock_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/clocktest"
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
			_, _, err = paddock.StartExec(context.Background(), paddock.NewCmd("true"), paddock.ExecOpts{}, tc.limits, nil)
			require.ErrorIs(t, err, paddock.ErrInvalid, "an exec under invalid limits is invalid")
		})
	}
}

func TestStartExecAppliesTheLimits(t *testing.T) {
	t.Parallel()
	limits := paddock.ExecLimits{MaxTimeout: time.Minute}
	dl, out, err := paddock.StartExec(context.Background(), paddock.NewCmd("true"), paddock.ExecOpts{Timeout: paddock.Duration(time.Hour)}, limits, nil)
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
			_, o, e := paddock.StartExec(context.Background(), paddock.NewCmd("true"), tc.opts, paddock.ExecLimits{}, nil)
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
			_, o, err := paddock.StartExec(context.Background(), paddock.NewCmd("true"), paddock.ExecOpts{MaxOutput: tc.maxOut}, paddock.ExecLimits{}, nil)
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

// events is an EventSource answering its events, then err.
type events struct {
	list []paddock.Event
	err  error
	at   func() // called before each Next (moves a clock)
}

func (e *events) Next(context.Context) (paddock.Event, error) {
	if e.at != nil {
		e.at()
	}
	if len(e.list) == 0 {
		return paddock.Event{}, e.err
	}
	ev := e.list[0]
	e.list = e.list[1:]
	return ev, nil
}

func TestCollectExec(t *testing.T) {
	t.Parallel()
	broken := errors.New("socket reset")
	mapped := &paddock.UnavailableError{Detail: "mapped"}
	cases := map[string]struct {
		events  []paddock.Event
		err     error
		cap     int64
		late    bool // the clock passes the deadline while the source is read
		want    paddock.ExecResult
		wantErr error
	}{
		"output then the exit": {events: []paddock.Event{paddock.Stdout([]byte("a")), paddock.Stderr([]byte("b")), paddock.Exit(3)},
			want: paddock.ExecResult{Stdout: []byte("a"), Stderr: []byte("b"), ExitCode: 3}},
		"an error event is the answer": {events: []paddock.Event{paddock.Stdout([]byte("a")), paddock.Failed(paddock.ErrClosedBeforeExit)},
			wantErr: paddock.ErrClosedBeforeExit},
		"past the cap":                   {events: []paddock.Event{paddock.Stdout([]byte("abcd")), paddock.Exit(0)}, cap: 3, wantErr: paddock.ErrExecOutputLimit},
		"a failed read is mapped":        {events: nil, err: broken, wantErr: mapped},
		"an exit after the deadline":     {events: []paddock.Event{paddock.Exit(0)}, late: true, wantErr: paddock.ErrUnavailable},
		"a read failed by the deadline":  {err: broken, late: true, wantErr: paddock.ErrUnavailable},
		"a source that ends without one": {err: io.EOF, wantErr: mapped},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clock := clocktest.Frozen()
			dl, out, err := paddock.StartExec(context.Background(), paddock.NewCmd("x"), paddock.ExecOpts{Timeout: paddock.Duration(time.Minute), MaxOutput: tc.cap}, paddock.ExecLimits{}, clock)
			require.NoError(t, err)
			src := &events{list: tc.events, err: tc.err}
			if tc.late {
				src.at = func() { clock.Advance(2 * time.Minute) }
			}
			res, err := paddock.CollectExec(context.Background(), src, dl, out, func(error) error { return mapped })
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				if tc.late {
					var et *paddock.ExecTimeoutError
					require.ErrorAs(t, err, &et, "the deadline's own error")
					assert.Equal(t, time.Minute, et.Timeout)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want.Stdout, res.Stdout)
			assert.Equal(t, tc.want.Stderr, res.Stderr)
			assert.Equal(t, tc.want.ExitCode, res.ExitCode)
		})
	}
}

// A deadline the caller fixed travels in the context: StartExec uses it
// rather than fix another.
func TestStartExecTakesTheCallersDeadline(t *testing.T) {
	t.Parallel()
	clock := clocktest.Frozen()
	fixed := paddock.StartExecDeadline(paddock.Duration(time.Minute), clock)
	clock.Advance(45 * time.Second)
	dl, _, err := paddock.StartExec(paddock.WithExecDeadline(context.Background(), fixed), paddock.NewCmd("x"), paddock.ExecOpts{Timeout: paddock.Duration(time.Hour)}, paddock.ExecLimits{}, nil)
	require.NoError(t, err)
	assert.Equal(t, 15*time.Second, dl.Remaining(), "the caller's minute, on the caller's clock")
	clock.Advance(time.Minute)
	_, _, err = paddock.StartExec(paddock.WithExecDeadline(context.Background(), fixed), paddock.NewCmd("x"), paddock.ExecOpts{}, paddock.ExecLimits{}, nil)
	var et *paddock.ExecTimeoutError
	require.ErrorAs(t, err, &et, "a spent budget starts nothing")
}

func TestExecDeadline(t *testing.T) {
	t.Parallel()
	t.Run("zero timeout is expired before anything starts", func(t *testing.T) {
		dl := paddock.StartExecDeadline(paddock.Duration(0), clocktest.New())
		assert.True(t, dl.Finite())
		assert.True(t, dl.Expired())
		var et *paddock.ExecTimeoutError
		require.ErrorAs(t, dl.Err(), &et)
		assert.Equal(t, time.Duration(0), et.Timeout)
	})
	t.Run("infinite never expires", func(t *testing.T) {
		clock := clocktest.New()
		dl := paddock.StartExecDeadline(nil, clock)
		clock.Advance(1000 * time.Hour)
		assert.False(t, dl.Finite())
		assert.False(t, dl.Expired())
		assert.Equal(t, time.Duration(-1), dl.Remaining())
		assert.Nil(t, dl.C(), "a nil channel blocks forever in a select")
	})
	t.Run("remaining shrinks; the error keeps the original timeout", func(t *testing.T) {
		clock := clocktest.New()
		dl := paddock.StartExecDeadline(paddock.Duration(100*time.Millisecond), clock)
		assert.Equal(t, 100*time.Millisecond, dl.Remaining())
		clock.Advance(60 * time.Millisecond)
		assert.Equal(t, 40*time.Millisecond, dl.Remaining())
		assert.False(t, dl.Expired())
		clock.Advance(40 * time.Millisecond)
		assert.Equal(t, time.Duration(0), dl.Remaining())
		assert.True(t, dl.Expired())
		clock.Advance(time.Hour)
		assert.Equal(t, time.Duration(0), dl.Remaining(), "remaining never goes negative")
		var et *paddock.ExecTimeoutError
		require.ErrorAs(t, dl.Err(), &et)
		assert.Equal(t, 100*time.Millisecond, et.Timeout)
		assert.ErrorIs(t, dl.Err(), paddock.ErrExecTimeout)
		assert.True(t, paddock.IsTransient(dl.Err()))
	})
	t.Run("C waits only the remaining budget", func(t *testing.T) {
		clock := clocktest.New()
		dl := paddock.StartExecDeadline(paddock.Duration(time.Second), clock)
		clock.Advance(700 * time.Millisecond)
		<-dl.C()
		assert.Equal(t, []time.Duration{300 * time.Millisecond}, clock.Delays())
		assert.True(t, dl.Expired())
	})
	t.Run("the system clock is the default", func(t *testing.T) {
		dl := paddock.StartExecDeadline(paddock.Duration(time.Hour), nil)
		assert.False(t, dl.Expired())
		assert.InDelta(t, float64(time.Hour), float64(dl.Remaining()), float64(time.Minute))
	})
}

func TestExecDeadlineContext(t *testing.T) {
	t.Parallel()
	clock := clocktest.New()
	dl := paddock.StartExecDeadline(paddock.Duration(time.Hour), clock)
	clock.Advance(59 * time.Minute)
	ctx, cancel := dl.Context(context.Background())
	defer cancel()
	at, ok := ctx.Deadline()
	require.True(t, ok)
	assert.InDelta(t, time.Minute, time.Until(at), float64(5*time.Second), "bounded by what remains")

	ctx, cancel = paddock.StartExecDeadline(nil, clock).Context(context.Background())
	defer cancel()
	_, ok = ctx.Deadline()
	assert.False(t, ok, "an infinite deadline adds none")
}

func TestStartExecValidatesThenAnswersASpentBudget(t *testing.T) {
	t.Parallel()
	sh := paddock.NewCmd("sh", "-c", "true")
	for name, tc := range map[string]struct {
		cmd  paddock.Cmd
		opts paddock.ExecOpts
		want error // nil: started
	}{
		"no limit":             {sh, paddock.ExecOpts{}, nil},
		"a limit":              {sh, paddock.ExecOpts{Timeout: paddock.Duration(time.Second)}, nil},
		"a zero timeout":       {sh, paddock.ExecOpts{Timeout: paddock.Duration(0)}, paddock.ErrExecTimeout},
		"a negative timeout":   {sh, paddock.ExecOpts{Timeout: paddock.Duration(-1)}, paddock.ErrInvalid},
		"a bad command first":  {paddock.Cmd{}, paddock.ExecOpts{Timeout: paddock.Duration(0)}, paddock.ErrInvalid},
		"a NUL in an argument": {paddock.NewCmd("sh", "a\x00b"), paddock.ExecOpts{}, paddock.ErrInvalid},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dl, _, err := paddock.StartExec(context.Background(), tc.cmd, tc.opts, paddock.ExecLimits{}, nil)
			if tc.want == nil {
				require.NoError(t, err)
				assert.Equal(t, tc.opts.Timeout != nil, dl.Finite())
				return
			}
			require.ErrorIs(t, err, tc.want)
		})
	}
}
