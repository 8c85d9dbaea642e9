//go:build unix

package local_test

import (
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The adapter's exec limits: a default for an exec that sets no timeout,
// and a ceiling that clamps a longer request, visibly.
func TestExecLimits(t *testing.T) {
	t.Parallel()
	d := paddock.Duration
	for name, tc := range map[string]struct {
		limits    paddock.ExecLimits
		requested *time.Duration
		want      time.Duration
	}{
		"the default applies to an exec without a timeout": {paddock.ExecLimits{DefaultTimeout: 10 * time.Second}, nil, 10 * time.Second},
		"an hour is clamped to the ceiling":                {paddock.ExecLimits{MaxTimeout: 10 * time.Second}, d(time.Hour), 10 * time.Second},
		"no timeout at all runs under the ceiling":         {paddock.ExecLimits{MaxTimeout: 10 * time.Second}, nil, 10 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := newLocal(t, withExecLimits(tc.limits))
			h := box(t, a, "limits")
			start := time.Now()
			_, err := a.Exec(ctx, h, paddock.NewCmd("sleep", "60"), paddock.ExecOpts{Timeout: tc.requested})
			var et *paddock.ExecTimeoutError
			require.ErrorAs(t, err, &et)
			assert.Equal(t, tc.want, et.Timeout, "the error names the timeout the exec ran under")
			assert.Less(t, time.Since(start), 30*time.Second, "the command was stopped, not waited for")

			res, err := a.Exec(ctx, h, paddock.NewCmd("true"), paddock.ExecOpts{Timeout: tc.requested})
			require.NoError(t, err)
			require.NotNil(t, res.Timeout, "the result says which timeout applied")
			assert.Equal(t, tc.want, *res.Timeout)
		})
	}
	t.Run("without limits an exec has none", func(t *testing.T) {
		t.Parallel()
		a := newLocal(t)
		res, err := a.Exec(ctx, box(t, a, "none"), paddock.NewCmd("true"), paddock.ExecOpts{})
		require.NoError(t, err)
		assert.Nil(t, res.Timeout)
	})
	t.Run("invalid limits are refused by New", func(t *testing.T) {
		t.Parallel()
		_, err := local.New(config(withRoot(t.TempDir()), withExecLimits(paddock.ExecLimits{DefaultTimeout: time.Hour, MaxTimeout: time.Minute})))
		require.ErrorIs(t, err, paddock.ErrInvalid)
	})
}

// stderr is kept apart, and the cap stops a command that never stops
// printing (yes): Exec answers exec_output_limit instead of growing
// without bound or waiting for ever.
func TestExecOutputCapStopsTheCommand(t *testing.T) {
	t.Parallel()
	a := newLocal(t)
	h := box(t, a, "cap")
	res, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", "echo out; echo err >&2; exit 2"), paddock.ExecOpts{})
	require.NoError(t, err)
	assert.Equal(t, "out\n", string(res.Stdout))
	assert.Equal(t, "err\n", string(res.Stderr))
	assert.Equal(t, 2, res.ExitCode)

	_, err = a.Exec(ctx, h, paddock.NewCmd("yes"), paddock.ExecOpts{MaxOutput: 1 << 20})
	require.ErrorIs(t, err, paddock.ErrExecOutputLimit)
	_, err = a.Exec(ctx, h, paddock.NewCmd("sh", "-c", "yes >&2"), paddock.ExecOpts{MaxOutput: 1 << 20})
	require.ErrorIs(t, err, paddock.ErrExecOutputLimit, "stderr counts against the cap too")
}

// An exec printing 200 MB under the default 64 MiB cap costs at most the
// cap plus a constant. It measures the process's heap, so it runs alone
// (not parallel).
func TestExecOutputCapBoundsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 200 MB")
	}
	a := newLocal(t)
	h := box(t, a, "memory")
	base := heapObjects()
	peak := watchHeap(t)
	_, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", "head -c 200000000 /dev/zero"), paddock.ExecOpts{})
	require.ErrorIs(t, err, paddock.ErrExecOutputLimit)
	growth := int64(peak()) - int64(base)
	t.Logf("exec of 200 MB under a %d MiB cap: heap peak %.1f MiB above the base", paddock.DefaultExecMaxOutput>>20, float64(growth)/(1<<20))
	// The heap's peak counts garbage not yet collected (the chunks read
	// on the way), so the constant is 16 MiB: CI once saw 72.1 MiB above
	// the base; an unbounded exec would show 200.
	assert.Less(t, growth, int64(paddock.DefaultExecMaxOutput+16<<20))
}

func heapObjects() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// watchHeap samples the heap every millisecond until the returned function
// is called, which answers the highest sample.
func watchHeap(t testing.TB) func() uint64 {
	var (
		highest atomic.Uint64
		wg      sync.WaitGroup
	)
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > highest.Load() {
				highest.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	stopped := false
	stop := func() uint64 {
		if !stopped {
			stopped = true
			close(done)
			wg.Wait()
		}
		return highest.Load()
	}
	t.Cleanup(func() { stop() })
	return stop
}

// A program the sandbox cannot run fails as it does under a shell (and
// on the providers that start commands through one): the command starts,
// says why on stderr and exits 127 when it does not exist, 126 when it is
// not an executable file; Exec and Spawn alike.
func TestProgramsThatCannotRunExitAsUnderAShell(t *testing.T) {
	t.Parallel()
	a := newLocal(t)
	h := box(t, a, "cannot-run")
	require.NoError(t, a.WriteFile(ctx, h, "/notes.txt", 0o644, strings.NewReader("not a program\n")))
	require.NoError(t, a.MakeDir(ctx, h, "/bin-dir", paddock.MakeDirOpts{}))
	for _, tc := range []struct {
		program string
		code    int
		stderr  string
	}{
		{"no-such-program-here", 127, "no-such-program-here: command not found\n"},
		{"./missing", 127, "./missing: No such file or directory\n"},
		{"./notes.txt", 126, "./notes.txt: Permission denied\n"},
		{"./bin-dir", 126, "./bin-dir: Permission denied\n"},
	} {
		t.Run(tc.program, func(t *testing.T) {
			res, err := a.Exec(ctx, h, paddock.NewCmd(tc.program, "arg"), paddock.ExecOpts{})
			require.NoError(t, err)
			assert.Equal(t, tc.code, res.ExitCode)
			assert.Equal(t, tc.stderr, string(res.Stderr))
			assert.Empty(t, res.Stdout)

			st, err := a.Spawn(ctx, h, paddock.NewCmd(tc.program), paddock.SpawnOpts{})
			require.NoError(t, err)
			evs := events(t, st, 30*time.Second)
			require.NotEmpty(t, evs)
			assert.Equal(t, paddock.Exit(tc.code), evs[len(evs)-1])
		})
	}
}

// JournalBytes counts what the sessions' journals hold on disk: nothing
// before a session, more after each.
func TestJournalBytes(t *testing.T) {
	t.Parallel()
	a := newLocal(t)
	h := box(t, a, "journals")
	require.Zero(t, a.JournalBytes())
	events(t, sh(t, a, h, "echo hello", paddock.SpawnOpts{}), 30*time.Second)
	first := a.JournalBytes()
	assert.Greater(t, first, int64(len("hello\n")), "the output and the records around it")
	events(t, sh(t, a, h, "seq 1 10000", paddock.SpawnOpts{}), 30*time.Second)
	assert.Greater(t, a.JournalBytes(), first)
}

// What happens to the processes a command leaves behind, and to its
// output, once the command exits.

// leftoverPID reads the "pid N" line a script printed first.
func leftoverPID(t *testing.T, out string) int {
	t.Helper()
	line, _, _ := strings.Cut(out, "\n")
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "pid "))
	require.NoError(t, err, "output %q", out)
	return pid
}

// running reports whether pid runs (a zombie counts as gone).
func running(pid int) bool { return local.Running(pid) }

// escaped starts `sleep 1000` in a session of its own (out of the
// command's process group), prints "pid N", and waits until it has left.
const escaped = `setsid sleep 1000 & echo pid $!; ` +
	`while [ "$(cut -d' ' -f6 /proc/$!/stat)" != $! ]; do sleep 0.001; done; `

// killAtEnd kills pid when the test ends, in case it survived.
func killAtEnd(t *testing.T, pid int) {
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
}

// A process that left the command's group and keeps its output open is
// killed after the grace; everything written is kept, and the exit is the
// command's.
func TestALeftoverHoldingTheOutputIsKilledAndTheOutputKept(t *testing.T) {
	t.Parallel()
	const script = escaped + `seq 1 5000`
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			// The drain limit (how long a killed leftover may keep the
			// output) is not what this tests: on a loaded machine the kill
			// can take seconds to land.
			a := newLocal(t, opt, withDrainLimit(time.Minute))
			h := box(t, a, "leftover")

			evs := events(t, sh(t, a, h, script, paddock.SpawnOpts{}), time.Minute)
			out := stdout(evs)
			assert.Equal(t, "exit:0", terminal(evs))
			assert.True(t, strings.HasSuffix(out, "\n4999\n5000\n"), "the whole output: %d bytes", len(out))
			if mode == "unisolated" { // (isolated, its pid is the namespace's)
				pid := leftoverPID(t, out)
				killAtEnd(t, pid)
				assert.Eventually(t, func() bool { return !running(pid) }, time.Minute, time.Millisecond)
			}

			res, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", script), paddock.ExecOpts{})
			require.NoError(t, err)
			assert.Equal(t, 0, res.ExitCode)
			assert.True(t, strings.HasSuffix(string(res.Stdout), "\n4999\n5000\n"))
		})
	}
}

// A daemon that let go of the output (it writes to a log) is not the
// command's output any more: it is left running, and the command ends at
// once, without waiting for the grace.
func TestADaemonThatClosedTheOutputIsLeftAlone(t *testing.T) {
	t.Parallel()
	a := newLocal(t, withIsolation(local.IsolationNone), withExitGrace(time.Hour))
	h := box(t, a, "daemon")
	evs := events(t, sh(t, a, h, `setsid sleep 1000 >/dev/null 2>&1 </dev/null & echo pid $!`, paddock.SpawnOpts{}), 10*time.Second)
	require.Equal(t, "exit:0", terminal(evs), "the command did not wait for the hour's grace")
	pid := leftoverPID(t, stdout(evs))
	killAtEnd(t, pid)
	assert.True(t, running(pid))
}

// A holder that survives being killed for the whole drain limit leaves the
// output incomplete: the command ends with output_truncated, never with an
// exit that passes for a whole output, and so does its replay.
func TestAnOutputThatCannotBeDrainedIsReportedTruncated(t *testing.T) {
	t.Parallel()
	a := newLocal(t, withIsolation(local.IsolationNone), local.WithUnkillableHolders,
		withExitGrace(time.Millisecond), withDrainLimit(50*time.Millisecond))
	h := box(t, a, "stuck")
	const script = escaped + `echo $! >> leftovers.pid`
	t.Cleanup(func() { // every run's leftover survived "being killed": kill it now
		b, _ := os.ReadFile(a.HostPath(h, "/leftovers.pid"))
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})

	st := sh(t, a, h, script, paddock.SpawnOpts{})
	evs := events(t, st, 10*time.Second)
	last := evs[len(evs)-1]
	require.Equal(t, paddock.EventError, last.Kind, "terminal %s", terminal(evs))
	assert.ErrorIs(t, last.Err, paddock.ErrOutputTruncated)

	replay, err := a.Attach(ctx, h, st.SessionID(), paddock.AttachOpts{})
	require.NoError(t, err)
	evs = events(t, replay, 10*time.Second)
	assert.ErrorIs(t, evs[len(evs)-1].Err, paddock.ErrOutputTruncated, "the replay ends the same way")

	_, err = a.Exec(ctx, h, paddock.NewCmd("sh", "-c", script), paddock.ExecOpts{})
	assert.ErrorIs(t, err, paddock.ErrOutputTruncated)
	assert.True(t, paddock.IsTransient(err))

	// Through the runtime the verdict keeps its detail, as a frame and as
	// an exec error.
	rt := startRuntime(t, a)
	view := rt.Adapter(paddock.ProviderLocal)
	through, err := view.Spawn(ctx, h, paddock.NewCmd("sh", "-c", script), paddock.SpawnOpts{})
	require.NoError(t, err)
	evs = events(t, through, 10*time.Second)
	assert.ErrorIs(t, evs[len(evs)-1].Err, paddock.ErrOutputTruncated)
	_, err = view.Exec(ctx, h, paddock.NewCmd("sh", "-c", script), paddock.ExecOpts{})
	assert.ErrorIs(t, err, paddock.ErrOutputTruncated)
}

// An exec past its deadline ends promptly even when a process outside the
// command's group holds its output, and that process is killed too.
func TestExecTimeoutEndsALeftoverHoldingTheOutput(t *testing.T) {
	t.Parallel()
	a := newLocal(t, withIsolation(local.IsolationNone))
	h := box(t, a, "timeout")
	pidFile := a.HostPath(h, "/leftover.pid")
	start := time.Now()
	_, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", `setsid sleep 1000 & echo $! > leftover.pid; exec sleep 1000`),
		paddock.ExecOpts{Timeout: paddock.Duration(2 * time.Second)}) // room to start on a loaded machine
	require.ErrorIs(t, err, paddock.ErrExecTimeout)
	assert.Less(t, time.Since(start), 30*time.Second, "the exec ends with its deadline, not with its leftover")
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	killAtEnd(t, pid)
	assert.Eventually(t, func() bool { return !running(pid) }, time.Minute, time.Millisecond)
}

// A deadline that passes while the exited command's leftovers have their
// grace ends the grace: the exec answers on time, not after the grace.
func TestExecDeadlineCutsTheGraceShort(t *testing.T) {
	t.Parallel()
	a := newLocal(t, withIsolation(local.IsolationNone), withExitGrace(time.Hour))
	h := box(t, a, "grace")
	start := time.Now()
	_, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", escaped+`echo $! > leftover.pid`),
		paddock.ExecOpts{Timeout: paddock.Duration(2 * time.Second)}) // room to start on a loaded machine
	require.ErrorIs(t, err, paddock.ErrExecTimeout)
	assert.Less(t, time.Since(start), 30*time.Second, "the deadline, not the hour's grace")
	b, err := os.ReadFile(a.HostPath(h, "/leftover.pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	killAtEnd(t, pid)
	assert.Eventually(t, func() bool { return !running(pid) }, time.Minute, time.Millisecond, "the leftover was killed")
}

func TestDrainOptionsAreValidated(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		opt   option
		valid bool
	}{
		"no grace":       {withExitGrace(0), true},
		"negative grace": {withExitGrace(-time.Millisecond), false},
		"zero limit":     {withDrainLimit(0), true}, // the default
		"negative limit": {withDrainLimit(-time.Second), false},
		"a limit":        {withDrainLimit(time.Millisecond), true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a, err := local.New(config(withRoot(t.TempDir()), tc.opt))
			if tc.valid {
				require.NoError(t, err)
				require.NoError(t, a.Close())
				return
			}
			require.ErrorIs(t, err, paddock.ErrInvalid)
		})
	}
}
