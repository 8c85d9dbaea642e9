//go:build unix

package local_test

import (
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
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
