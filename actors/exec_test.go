package actors_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/internal/clocktest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// timed is a fake whose Exec can move a manual clock, to place a result
// just after the exec deadline, and which counts what reaches it. (A
// command that never ends, cut by the real timer, is in defects_test.go.)
type timed struct {
	*fake.Adapter
	clock *clocktest.Manual
	calls atomic.Int64
}

// Exec answers "out" and exit 0 after moving the clock as the command
// names: past the deadline, within it, or a long way before the output.
func (a *timed) Exec(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, o paddock.ExecOpts) (paddock.ExecResult, error) {
	a.calls.Add(1)
	skew := map[string]time.Duration{"exits-late": 101 * time.Millisecond, "in-time": 80 * time.Millisecond, "starts-slowly": time.Second}
	if d, ok := skew[cmd.Path]; ok {
		a.clock.Advance(d)
		return paddock.ExecResult{Stdout: []byte("out")}, nil
	}
	return a.Adapter.Exec(ctx, h, cmd, o)
}

func (a *timed) Get(ctx context.Context, h paddock.Handle) (paddock.Info, error) {
	a.calls.Add(1)
	return a.Adapter.Get(ctx, h)
}

func startTimed(t *testing.T) (*actors.Runtime, *timed, paddock.Handle) {
	a := &timed{Adapter: fake.New(), clock: clocktest.Frozen()}
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": a}, Clock: a.clock})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)) })
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	return rt, a, h
}

func TestExecDeadline(t *testing.T) {
	t.Parallel()
	ms100 := paddock.Duration(100 * time.Millisecond)
	t.Run("timeout 0 answers without dispatching anything", func(t *testing.T) {
		rt, a, h := startTimed(t)
		_, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("emit", "out:x"), paddock.ExecOpts{Timeout: paddock.Duration(0)})
		var et *paddock.ExecTimeoutError
		require.ErrorAs(t, err, &et)
		assert.Equal(t, time.Duration(0), et.Timeout)
		assert.Zero(t, a.calls.Load(), "the adapter was not asked anything")
		var op *paddock.OpError
		require.ErrorAs(t, err, &op)
		assert.Equal(t, "exec", op.Op)
	})
	t.Run("an exit just after the deadline is the timeout, not success", func(t *testing.T) {
		rt, _, h := startTimed(t)
		_, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("exits-late"), paddock.ExecOpts{Timeout: ms100})
		var et *paddock.ExecTimeoutError
		require.ErrorAs(t, err, &et)
		assert.Equal(t, 100*time.Millisecond, et.Timeout, "the original timeout is reported")
	})
	t.Run("time spent starting counts", func(t *testing.T) {
		rt, _, h := startTimed(t)
		_, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("starts-slowly"), paddock.ExecOpts{Timeout: ms100})
		require.ErrorIs(t, err, paddock.ErrExecTimeout)
	})
	t.Run("a timely finite exec equals an infinite one", func(t *testing.T) {
		rt, _, h := startTimed(t)
		finite, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("in-time"), paddock.ExecOpts{Timeout: ms100})
		require.NoError(t, err)
		infinite, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("in-time"), paddock.ExecOpts{})
		require.NoError(t, err)
		assert.Equal(t, infinite, finite)
		assert.Equal(t, "out", string(finite.Stdout))
	})
	t.Run("a negative timeout is invalid", func(t *testing.T) {
		rt, a, h := startTimed(t)
		_, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("emit"), paddock.ExecOpts{Timeout: paddock.Duration(-time.Second)})
		require.ErrorIs(t, err, paddock.ErrInvalid)
		assert.Zero(t, a.calls.Load())
	})
}

func TestExecResults(t *testing.T) {
	t.Parallel()
	rt, _ := startFake(t)
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	tests := map[string]struct {
		instrs   []string
		opts     paddock.ExecOpts
		out, err string
		code     int
		fails    error
	}{
		"stderr apart":            {[]string{"out:a", "err:b", "out:c", "exit:4"}, paddock.ExecOpts{}, "ac", "b", 4, nil},
		"stderr merged in order":  {[]string{"out:a", "err:b", "out:c", "exit:4"}, paddock.ExecOpts{StderrToStdout: true}, "abc", "", 4, nil},
		"an error frame discards": {[]string{"out:partial", "drop"}, paddock.ExecOpts{}, "", "", 0, paddock.ErrClosedBeforeExit},
		"an invalid command":      {[]string{"teleport"}, paddock.ExecOpts{}, "", "", 0, paddock.ErrInvalid},
		"nonzero exit is data":    {[]string{"exit:7"}, paddock.ExecOpts{}, "", "", 7, nil},
		"exactly the cap":         {[]string{"out:abc", "err:de"}, paddock.ExecOpts{MaxOutput: 5}, "abc", "de", 0, nil},
		"past the cap":            {[]string{"out:abc", "err:def"}, paddock.ExecOpts{MaxOutput: 5}, "", "", 0, paddock.ErrExecOutputLimit},
		"a negative cap":          {[]string{"out:abc"}, paddock.ExecOpts{MaxOutput: -5}, "", "", 0, paddock.ErrInvalid},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("emit", tc.instrs...), tc.opts)
			if tc.fails != nil {
				require.ErrorIs(t, err, tc.fails)
				assert.Empty(t, res.Stdout)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.out, string(res.Stdout))
			assert.Equal(t, tc.err, string(res.Stderr))
			assert.Equal(t, tc.code, res.ExitCode)
		})
	}
	_, err = rt.Adapter("fake").Exec(ctx, paddock.Handle{Provider: "fake", Name: "missing"}, paddock.NewCmd("emit"), paddock.ExecOpts{})
	require.ErrorIs(t, err, paddock.ErrNotFound)
}

// overflowing answers more output than any cap allows, and a timeout.
type overflowing struct{ *fake.Adapter }

func (overflowing) Exec(context.Context, paddock.Handle, paddock.Cmd, paddock.ExecOpts) (paddock.ExecResult, error) {
	return paddock.ExecResult{Stdout: []byte("0123456789"), Timeout: paddock.Duration(time.Minute)}, nil
}

// The runtime holds an adapter to the cap it was asked for, and carries
// the timeout the adapter reports.
func TestRuntimeHoldsAdaptersToTheOutputCap(t *testing.T) {
	t.Parallel()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": overflowing{fake.New()}}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)) })
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	_, err = rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("x"), paddock.ExecOpts{MaxOutput: 9})
	require.ErrorIs(t, err, paddock.ErrExecOutputLimit)
	res, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("x"), paddock.ExecOpts{MaxOutput: 10})
	require.NoError(t, err)
	assert.Equal(t, paddock.ExecResult{Stdout: []byte("0123456789"), Timeout: paddock.Duration(time.Minute)}, res)
}

// limited is a fake with exec limits of its own whose Exec reports the
// deadline it runs under, as every adapter fixes it: paddock.StartExec with
// the system clock.
type limited struct {
	*fake.Adapter
	limits paddock.ExecLimits
	clock  *clocktest.Manual
	seen   chan time.Duration
}

func (a *limited) ExecLimits() paddock.ExecLimits { return a.limits }

func (a *limited) Exec(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, o paddock.ExecOpts) (paddock.ExecResult, error) {
	a.clock.Advance(20 * time.Minute) // time the runtime's clock sees pass before the adapter starts
	dl, out, err := paddock.StartExec(ctx, cmd, o, a.limits, nil)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	a.seen <- dl.Remaining()
	return out.Result(0), nil
}

// The exec deadline is worked out once: by the runtime, on its clock,
// under the adapter's limits; the adapter runs under that one, not one of
// its own on the system clock.
func TestTheExecDeadlineIsFixedOnceOnTheRuntimesClock(t *testing.T) {
	t.Parallel()
	a := &limited{Adapter: fake.New(), limits: paddock.ExecLimits{MaxTimeout: time.Hour}, clock: clocktest.Frozen(), seen: make(chan time.Duration, 1)}
	t.Cleanup(a.Reset)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": a}, Clock: a.clock})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)) })
	c := rt.Adapter("fake")
	h, err := c.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)

	res, err := c.Exec(ctx, h, paddock.NewCmd("emit"), paddock.ExecOpts{}) // no timeout: the adapter's ceiling
	require.NoError(t, err)
	assert.Equal(t, 40*time.Minute, <-a.seen, "the hour the runtime fixed, less the 20 minutes its clock moved")
	require.NotNil(t, res.Timeout)
	assert.Equal(t, time.Hour, *res.Timeout, "the result says the ceiling it ran under")
}
