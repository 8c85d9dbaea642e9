package actors_test

import (
	"context"
	"io"
	"io/fs"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/internal/clocktest"
	"github.com/paddockhq/paddock/messages"
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

// counting is a fake that records every call that reaches it, and can make
// Exec wait for its context and file calls panic.
type counting struct {
	*fake.Adapter
	mu          sync.Mutex
	calls       []string
	execBlocks  bool
	execStopped chan struct{} // closed when a blocking Exec saw its context end
	filesPanic  bool
}

func newCounting() *counting { return &counting{Adapter: fake.New(), execStopped: make(chan struct{})} }

func (c *counting) record(op string) {
	c.mu.Lock()
	c.calls = append(c.calls, op)
	c.mu.Unlock()
}

func (c *counting) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

func (c *counting) Create(ctx context.Context, name string, o paddock.CreateOpts) (paddock.Handle, error) {
	c.record("create")
	return c.Adapter.Create(ctx, name, o)
}
func (c *counting) Exec(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, o paddock.ExecOpts) (paddock.ExecResult, error) {
	c.record("exec")
	if c.execBlocks {
		<-ctx.Done()
		close(c.execStopped)
		return paddock.ExecResult{}, &paddock.UnavailableError{Detail: "killed: " + ctx.Err().Error()}
	}
	return c.Adapter.Exec(ctx, h, cmd, o)
}
func (c *counting) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, o paddock.SpawnOpts) (paddock.Stream, error) {
	c.record("spawn")
	return c.Adapter.Spawn(ctx, h, cmd, o)
}
func (c *counting) Attach(ctx context.Context, h paddock.Handle, id string, o paddock.AttachOpts) (paddock.Stream, error) {
	c.record("attach")
	return c.Adapter.Attach(ctx, h, id, o)
}
func (c *counting) WriteFile(ctx context.Context, h paddock.Handle, path string, mode fs.FileMode, r io.Reader) error {
	c.record("write_file")
	if c.filesPanic {
		panic("adapter bug in WriteFile")
	}
	return c.Adapter.WriteFile(ctx, h, path, mode, r)
}
func (c *counting) ReadFile(ctx context.Context, h paddock.Handle, path string) (io.ReadCloser, error) {
	c.record("read_file")
	if c.filesPanic {
		panic("adapter bug in ReadFile")
	}
	return c.Adapter.ReadFile(ctx, h, path)
}
func (c *counting) CreateNew(ctx context.Context, name string, o paddock.CreateNewOpts) (paddock.Handle, error) {
	c.record("create_new")
	return c.Adapter.CreateNew(ctx, name, o)
}
func (c *counting) TerminateSession(ctx context.Context, h paddock.Handle, id string, o paddock.TerminateOpts) error {
	c.record("terminate_session:" + string(o.Mode))
	return c.Adapter.TerminateSession(ctx, h, id, o)
}
func (c *counting) ApplyNetworkPolicy(ctx context.Context, h paddock.Handle, p paddock.NetworkPolicy) error {
	c.record("apply_network_policy")
	return c.Adapter.ApplyNetworkPolicy(ctx, h, p)
}
func (c *counting) Expose(ctx context.Context, h paddock.Handle, port int, o paddock.ExposeOpts) (paddock.Preview, error) {
	c.record("expose")
	return c.Adapter.Expose(ctx, h, port, o)
}
func (c *counting) DestroyOnce(context.Context, paddock.Handle, paddock.DestroyOnceOpts) error {
	c.record("destroy_once")
	return nil
}
func (c *counting) CreateCheckpointOnce(context.Context, paddock.Handle, paddock.CheckpointOnceOpts) (string, error) {
	c.record("create_checkpoint_once")
	return "cp", nil
}

func startCounting(t *testing.T, c *counting) (*actors.Runtime, paddock.Handle) {
	t.Helper()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": c}})
	require.NoError(t, err)
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, rt.Shutdown(sctx))
	})
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	return rt, h
}

// Through the runtime an exec is the adapter's Exec: it leaves no session.
func TestRuntimeExecIsTheAdaptersExec(t *testing.T) {
	t.Parallel()
	c := newCounting()
	rt, h := startCounting(t, c)
	res, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("emit", "out:hi"), paddock.ExecOpts{})
	require.NoError(t, err)
	assert.Equal(t, "hi", string(res.Stdout))
	assert.Equal(t, []string{"create", "exec"}, c.seen(), "the adapter's Exec, not a spawn")
	sessions, err := rt.Adapter(h.Provider).ListSessions(ctx, h)
	require.NoError(t, err)
	assert.Empty(t, sessions, "an exec leaves no session")
}

// An exec past its deadline through the runtime means what it means on the
// adapter: the adapter's Exec is told to stop (and kills the command).
func TestRuntimeExecDeadlineStopsTheAdaptersExec(t *testing.T) {
	t.Parallel()
	c := newCounting()
	c.execBlocks = true
	rt, h := startCounting(t, c)
	_, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("sleep", "1000"), paddock.ExecOpts{Timeout: paddock.Duration(100 * time.Millisecond)})
	var et *paddock.ExecTimeoutError
	require.ErrorAs(t, err, &et)
	assert.Equal(t, 100*time.Millisecond, et.Timeout)
	select {
	case <-c.execStopped:
	case <-time.After(time.Minute):
		require.Fail(t, "the adapter's Exec was never told to stop")
	}
}

// Every invalid input of every operation gets, through the runtime, the
// answer the plain facade gives it, and reaches no adapter.
func TestInvalidInputNeverReachesTheAdapter(t *testing.T) {
	t.Parallel()
	c := newCounting()
	rt, h := startCounting(t, c)
	base := len(c.seen())
	sh := paddock.NewCmd("sh", "-c", "true")
	badEnv := paddock.Cmd{Path: "sh", Env: []paddock.EnvVar{{Name: "A=B", Value: "c"}}}
	tests := map[string]struct {
		runtime func() error
		facade  error
	}{
		"create: an empty name": {func() error { _, err := rt.Adapter("fake").Create(ctx, "", paddock.CreateOpts{}); return err },
			paddock.ValidateSandboxName("")},
		"create: a slash in the name": {func() error { _, err := rt.Adapter("fake").Create(ctx, "a/b", paddock.CreateOpts{}); return err },
			paddock.ValidateSandboxName("a/b")},
		"create_new: a zero timeout": {func() error {
			_, err := rt.Adapter("fake").CreateNew(ctx, "x", paddock.CreateNewOpts{Timeout: paddock.Duration(0)})
			return err
		}, errOf(paddock.CreateNew(ctx, c.Adapter, "x", paddock.CreateNewOpts{Timeout: paddock.Duration(0)}))},
		"destroy_once: a negative timeout": {func() error {
			return rt.Adapter(h.Provider).DestroyOnce(ctx, h, paddock.DestroyOnceOpts{Timeout: paddock.Duration(-1)})
		}, paddock.DestroyOnce(ctx, c.Adapter, h, paddock.DestroyOnceOpts{Timeout: paddock.Duration(-1)})},
		"create_checkpoint_once: a bad operation id": {func() error {
			_, err := rt.Adapter(h.Provider).CreateCheckpointOnce(ctx, h, paddock.CheckpointOnceOpts{OperationID: "bad id"})
			return err
		}, errOf(paddock.CreateCheckpointOnce(ctx, c.Adapter, h, paddock.CheckpointOnceOpts{OperationID: "bad id"}))},
		"terminate_session: mode kill": {func() error {
			return rt.Adapter(h.Provider).TerminateSession(ctx, h, "s-1", paddock.TerminateOpts{Mode: "kill"})
		}, errOf(paddock.ValidateTermination("s-1", paddock.TerminateOpts{Mode: "kill"}))},
		"terminate_session: mode FORCE": {func() error {
			return rt.Adapter(h.Provider).TerminateSession(ctx, h, "s-1", paddock.TerminateOpts{Mode: "FORCE"})
		}, errOf(paddock.ValidateTermination("s-1", paddock.TerminateOpts{Mode: "FORCE"}))},
		"terminate_session: a path as id": {func() error {
			return rt.Adapter(h.Provider).TerminateSession(ctx, h, "../x", paddock.TerminateOpts{})
		}, errOf(paddock.ValidateTermination("../x", paddock.TerminateOpts{}))},
		"terminate_session: 31 s": {func() error {
			return rt.Adapter(h.Provider).TerminateSession(ctx, h, "s-1", paddock.TerminateOpts{Timeout: paddock.Duration(31 * time.Second)})
		}, errOf(paddock.ValidateTermination("s-1", paddock.TerminateOpts{Timeout: paddock.Duration(31 * time.Second)}))},
		"expose: port 0": {func() error { _, err := rt.Adapter(h.Provider).Expose(ctx, h, 0, paddock.ExposeOpts{}); return err },
			errOf(paddock.ValidateExpose(0, paddock.ExposeOpts{}))},
		"expose: a negative ttl": {func() error {
			_, err := rt.Adapter(h.Provider).Expose(ctx, h, 80, paddock.ExposeOpts{TTL: -1})
			return err
		},
			errOf(paddock.ValidateExpose(80, paddock.ExposeOpts{TTL: -1}))},
		"exec: an empty command": {func() error {
			_, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.Cmd{}, paddock.ExecOpts{})
			return err
		},
			paddock.ValidateExec(paddock.Cmd{}, paddock.ExecOpts{})},
		"exec: a negative timeout": {func() error {
			_, err := rt.Adapter(h.Provider).Exec(ctx, h, sh, paddock.ExecOpts{Timeout: paddock.Duration(-1)})
			return err
		}, paddock.ValidateExec(sh, paddock.ExecOpts{Timeout: paddock.Duration(-1)})},
		"exec: a negative output cap": {func() error {
			_, err := rt.Adapter(h.Provider).Exec(ctx, h, sh, paddock.ExecOpts{MaxOutput: -1})
			return err
		}, paddock.ValidateExec(sh, paddock.ExecOpts{MaxOutput: -1})},
		"exec: a NUL byte in an argument": {func() error {
			_, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("echo", "a\x00b"), paddock.ExecOpts{})
			return err
		}, paddock.ValidateExec(paddock.NewCmd("echo", "a\x00b"), paddock.ExecOpts{})},
		"exec: a malformed env entry": {func() error {
			_, err := rt.Adapter(h.Provider).Exec(ctx, h, badEnv, paddock.ExecOpts{})
			return err
		}, paddock.ValidateExec(badEnv, paddock.ExecOpts{})},
		"create_new: a timeout past its ceiling": {func() error {
			_, err := rt.Adapter("fake").CreateNew(ctx, "x", paddock.CreateNewOpts{Timeout: paddock.Duration(time.Hour)})
			return err
		}, errOf(paddock.CreateNew(ctx, c.Adapter, "x", paddock.CreateNewOpts{Timeout: paddock.Duration(time.Hour)}))},
		"destroy_once: a timeout past its ceiling": {func() error {
			return rt.Adapter(h.Provider).DestroyOnce(ctx, h, paddock.DestroyOnceOpts{Timeout: paddock.Duration(time.Hour)})
		}, paddock.DestroyOnce(ctx, c.Adapter, h, paddock.DestroyOnceOpts{Timeout: paddock.Duration(time.Hour)})},
		"expose: port 70000": {func() error { _, err := rt.Adapter(h.Provider).Expose(ctx, h, 70000, paddock.ExposeOpts{}); return err },
			errOf(paddock.ValidateExpose(70000, paddock.ExposeOpts{}))},
		"expose: a ttl past its ceiling": {func() error {
			_, err := rt.Adapter(h.Provider).Expose(ctx, h, 80, paddock.ExposeOpts{TTL: 48 * time.Hour})
			return err
		},
			errOf(paddock.ValidateExpose(80, paddock.ExposeOpts{TTL: 48 * time.Hour}))},
		"spawn: a NUL byte in the dir": {func() error {
			_, err := spawn(rt, ctx, h, paddock.Cmd{Path: "sh", Dir: "/a\x00"}, paddock.SpawnOpts{})
			return err
		}, paddock.ValidateSpawn(c, paddock.Cmd{Path: "sh", Dir: "/a\x00"}, paddock.SpawnOpts{})},
		"read_file: a NUL byte in the path": {func() error { _, err := rt.Adapter(h.Provider).ReadFile(ctx, h, "/a\x00b"); return err }, paddock.ValidatePath("/a\x00b")},
		"spawn: an empty command": {func() error { _, err := spawn(rt, ctx, h, paddock.Cmd{}, paddock.SpawnOpts{}); return err },
			paddock.ValidateSpawn(c, paddock.Cmd{}, paddock.SpawnOpts{})},
		"spawn: a bad name": {func() error { _, err := spawn(rt, ctx, h, sh, paddock.SpawnOpts{Name: "a/b"}); return err },
			paddock.ValidateSpawn(c, sh, paddock.SpawnOpts{Name: "a/b"})},
		"attach: a path as id": {func() error { _, err := attach(rt, ctx, h, "../x", paddock.AttachOpts{}); return err },
			paddock.ValidateAttach(c, "../x")},
		"network policy: a URL": {func() error {
			return rt.Adapter(h.Provider).ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{"http://x"}})
		}, paddock.NetworkPolicy{Allow: []string{"http://x"}}.Validate()},
		"write_file: a relative path": {func() error { return rt.Adapter(h.Provider).WriteFile(ctx, h, "rel", 0o644, nil) }, paddock.ValidatePath("rel")},
		"read_file: a relative path":  {func() error { _, err := rt.Adapter(h.Provider).ReadFile(ctx, h, "rel"); return err }, paddock.ValidatePath("rel")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			require.Error(t, tc.facade, "the facade refuses it")
			err := tc.runtime()
			require.Error(t, err)
			assert.Equal(t, paddock.KindOf(tc.facade), paddock.KindOf(err), "%v", err)
			assert.Contains(t, err.Error(), tc.facade.Error(), "the same detail")
		})
	}
	assert.Equal(t, base, len(c.seen()), "no invalid input reached the adapter: %v", c.seen()[base:])
}

func errOf[T any](_ T, err error) error { return err }

// An adapter that panics in a file call is an error, never a crash of the
// embedding program.
func TestFileCallsRecoverAdapterPanics(t *testing.T) {
	t.Parallel()
	c := newCounting()
	rt, h := startCounting(t, c)
	c.filesPanic = true
	var err error
	require.NotPanics(t, func() { err = rt.Adapter(h.Provider).WriteFile(ctx, h, "/f", 0o644, nil) })
	require.ErrorIs(t, err, paddock.ErrUnavailable)
	assert.Contains(t, err.Error(), "adapter_panic")
	require.NotPanics(t, func() { _, err = rt.Adapter(h.Provider).ReadFile(ctx, h, "/f") })
	require.ErrorIs(t, err, paddock.ErrUnavailable)
	assert.Contains(t, err.Error(), "adapter_panic")
}

// A plain-Go subscriber that does not read stalls neither Shutdown nor the
// others: Shutdown returns at once, and the idle subscriber later reads
// everything it was owed, then Error{stopped_before_exit}.
func TestShutdownDoesNotWaitForAnIdleReader(t *testing.T) {
	t.Parallel()
	fa := &owedAdapter{Adapter: fake.New()}
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": fa}})
	require.NoError(t, err)
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	// The commands outlive the runtime, as detachable commands do.
	t.Cleanup(func() { _ = fa.Destroy(context.Background(), h) })
	idle, err := spawn(rt, ctx, h, paddock.NewCmd("owed"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	busy, err := spawn(rt, ctx, h, paddock.NewCmd("emit", "out:ready", "stay"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	require.Equal(t, "ready", string(frame(t, busy).(*messages.Stdout).GetData()))
	// Once the runtime asks for a third event, it has sent the first two on:
	// they are owed to the idle subscriber.
	require.Eventually(t, func() bool { return fa.nexts.Load() >= 3 }, time.Minute, time.Millisecond)

	// A Shutdown that waited for the idle reader would wait out its
	// context (10 minutes); one that does not returns long before.
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	require.NoError(t, rt.Shutdown(sctx))
	assert.Less(t, time.Since(start), 5*time.Minute, "Shutdown waits for no reader")
	assert.Equal(t, "error:stopped_before_exit", terminalText(frame(t, busy)))

	var got []string
	for f := range idle.C() {
		if o, ok := f.(*messages.Stdout); ok {
			got = append(got, string(o.GetData()))
			continue
		}
		got = append(got, terminalText(f))
	}
	assert.Equal(t, []string{"one", "two", "error:stopped_before_exit"}, got, "everything owed, then the terminal frame")
}

// owedAdapter is a fake whose "owed" command prints one and two, then
// waits; it counts the reads of its stream.
type owedAdapter struct {
	*fake.Adapter
	nexts atomic.Int64
}

func (a *owedAdapter) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, o paddock.SpawnOpts) (paddock.Stream, error) {
	if cmd.Path != "owed" {
		return a.Adapter.Spawn(ctx, h, cmd, o)
	}
	return &owedStream{a: a}, nil
}

type owedStream struct{ a *owedAdapter }

func (s *owedStream) Next(ctx context.Context) (paddock.Event, error) {
	switch s.a.nexts.Add(1) {
	case 1:
		return paddock.Stdout([]byte("one")), nil
	case 2:
		return paddock.Stdout([]byte("two")), nil
	}
	<-ctx.Done()
	return paddock.Event{}, ctx.Err()
}
func (s *owedStream) WriteStdin(context.Context, []byte) error { return nil }
func (s *owedStream) CloseStdin(context.Context) error         { return nil }
func (s *owedStream) Close() error                             { return nil }
func (s *owedStream) SessionID() string                        { return "" }
