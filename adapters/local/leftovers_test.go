//go:build unix

package local_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
