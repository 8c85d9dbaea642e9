//go:build unix

package local_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSessionsSurviveARuntimeRestart runs a "runtime" in a child process,
// kills it with SIGKILL, and attaches from a new adapter: the finished
// session replays with its exit code; the live one's process died with its
// runtime, so it replays its output and then closed_before_exit.
func TestSessionsSurviveARuntimeRestart(t *testing.T) {
	t.Parallel()
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			root := t.TempDir()
			exe, err := os.Executable()
			require.NoError(t, err)
			child := exec.Command(exe)
			isolation := "none"
			if mode == "namespaces" {
				isolation = "namespaces"
			}
			child.Env = append(os.Environ(), helperEnv+"=runtime", "HELPER_ROOT="+root, "HELPER_ISOLATION="+isolation)
			out, err := child.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, child.Start())
			line, err := bufio.NewReader(out).ReadString('\n')
			require.NoError(t, err, "the helper runtime reports its sessions")
			ids := strings.Fields(line)
			require.Len(t, ids, 2, "helper said %q", line)
			require.NoError(t, child.Process.Signal(syscall.SIGKILL))
			_ = child.Wait()

			a := newLocal(t, withRoot(root), opt)
			h := a.BuildHandle("survivor")
			sessions, err := a.ListSessions(ctx, h)
			require.NoError(t, err)
			assert.Len(t, sessions, 2, "both sessions are still listed")

			finished, err := a.Attach(ctx, h, ids[0], paddock.AttachOpts{})
			require.NoError(t, err)
			evs := events(t, finished, 5*time.Second)
			assert.Equal(t, "finished-output\n", stdout(evs))
			assert.Equal(t, "exit:42", terminal(evs), "the exit code survives the restart")

			live, err := a.Attach(ctx, h, ids[1], paddock.AttachOpts{})
			require.NoError(t, err)
			evs = events(t, live, 5*time.Second)
			assert.Equal(t, "live-output\n", stdout(evs))
			assert.Equal(t, "error:unavailable: closed_before_exit", terminal(evs), "its fate is unknown, never a made-up exit")
			assert.Zero(t, a.CountProcesses(h, ids[1]), "its processes did not outlive their runtime")
			require.NoError(t, a.TerminateSession(ctx, h, ids[1], paddock.TerminateOpts{}), "and it is finished now")
		})
	}
}

func TestTheEnvironmentIsClean(t *testing.T) {
	t.Setenv("PADDOCK_TEST_HOST_SECRET", "do-not-leak")
	a := newLocal(t)
	h := box(t, a, "env")
	res, err := a.Exec(ctx, h, paddock.Cmd{Path: "env", Env: []paddock.EnvVar{{Name: "A", Value: "1"}, {Name: "A", Value: "2"}, {Name: "PATH", Value: "/usr/bin:/bin"}}}, paddock.ExecOpts{})
	require.NoError(t, err)
	env := string(res.Stdout)
	assert.NotContains(t, env, "do-not-leak", "nothing of the host process's environment")
	assert.Contains(t, env, "A=2\n", "a later entry wins")
	assert.NotContains(t, env, "A=1\n")
	assert.Contains(t, env, "PATH=/usr/bin:/bin\n", "the command may set PATH")
	assert.Contains(t, env, "PADDOCK_SANDBOX=env\n")
	assert.Contains(t, env, "HOME="+a.HostPath(h, "/")+"\n")
}

func TestTTY(t *testing.T) {
	t.Parallel()
	a := newLocal(t)
	h := box(t, a, "tty")
	st := sh(t, a, h, `[ -t 0 ] && echo is-a-tty; echo to-stderr >&2; read line; echo got:$line`, paddock.SpawnOpts{TTY: true, Stdin: true})
	require.NoError(t, st.WriteStdin(ctx, []byte("hello\n")))
	evs := events(t, st, 5*time.Second)
	for _, ev := range evs {
		assert.NotEqual(t, paddock.EventStderr, ev.Kind, "no stderr frames in tty mode")
	}
	out := stdout(evs)
	assert.Contains(t, out, "is-a-tty")
	assert.Contains(t, out, "to-stderr", "stderr arrives merged on the terminal")
	assert.Contains(t, out, "got:hello")
	assert.Equal(t, "exit:0", terminal(evs))

	eof := sh(t, a, h, `cat; echo after-eof`, paddock.SpawnOpts{TTY: true, Stdin: true})
	require.NoError(t, eof.CloseStdin(ctx))
	assert.Contains(t, stdout(events(t, eof, 5*time.Second)), "after-eof", "closing stdin ends input on a tty too")
}

func TestGetDistinguishesAbsenceFromTrouble(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := newLocal(t, withRoot(filepath.Join(dir, "root")))
	_, err := a.Get(ctx, a.BuildHandle("never"))
	require.ErrorIs(t, err, paddock.ErrNotFound, "no root yet: nothing exists")
	h := box(t, a, "present")
	info, err := a.Get(ctx, h)
	require.NoError(t, err)
	require.Equal(t, "present", info.Name)
	require.Empty(t, info.ID, "Create mints no instance id")
	require.WithinDuration(t, time.Now(), info.CreatedAt, time.Minute)
	fresh, err := a.CreateNew(ctx, "fresh", paddock.CreateNewOpts{})
	require.NoError(t, err)
	info, err = a.Get(ctx, fresh)
	require.NoError(t, err)
	require.Equal(t, fresh.InstanceID, info.ID, "CreateNew's instance id")

	// A root that cannot be read is trouble, never absence.
	broken := newLocal(t, withRoot(filepath.Join(dir, "root", "present", "meta.json")))
	_, err = broken.Get(ctx, h)
	require.ErrorIs(t, err, paddock.ErrUnavailable)
	require.NotErrorIs(t, err, paddock.ErrNotFound)
	_, err = broken.ListAllNames(ctx)
	require.ErrorIs(t, err, paddock.ErrUnavailable)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "root", "present", "meta.json"), []byte("{garbage"), 0o644))
	_, err = a.Get(ctx, h)
	require.ErrorIs(t, err, paddock.ErrUnavailable, "unreadable metadata is not absence")
}

// A TempRoot is fresh, holds the sandboxes, and is gone after Close; it
// cannot be asked for together with a Root.
func TestTempRootIsRemovedByClose(t *testing.T) {
	t.Parallel()
	_, err := local.New(local.Config{TempRoot: true, Root: t.TempDir()})
	require.ErrorIs(t, err, paddock.ErrInvalid)

	a, err := local.New(local.Config{TempRoot: true})
	require.NoError(t, err)
	root := a.Root()
	require.DirExists(t, root)
	b, err := local.New(local.Config{TempRoot: true})
	require.NoError(t, err)
	require.NotEqual(t, root, b.Root(), "each adapter has its own")
	require.NoError(t, b.Close())
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	_, err = a.Exec(ctx, h, paddock.NewCmd("sh", "-c", "echo x > f"), paddock.ExecOpts{})
	require.NoError(t, err)
	require.NoError(t, a.Close())
	require.NoDirExists(t, root)
}

func TestDestroyKillsEveryProcess(t *testing.T) {
	t.Parallel()
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			a := newLocal(t, opt)
			h := box(t, a, "doomed")
			st := sh(t, a, h, `sleep 1000 & sleep 1000 & echo up; wait`, paddock.SpawnOpts{})
			next(t, st)
			sessions, err := a.ListSessions(ctx, h)
			require.NoError(t, err)
			require.Greater(t, a.CountProcesses(h, sessions[0].ID), 1)
			record := readSessionRecord(t, a, h, sessions[0].ID)

			require.NoError(t, a.Destroy(ctx, h))
			assert.Equal(t, "exit:137", terminal(events(t, st, 5*time.Second)), "the subscriber learns the real end")
			assert.Zero(t, countByRecord(record), "every process is gone")
			_, err = a.Get(ctx, h)
			require.ErrorIs(t, err, paddock.ErrNotFound)
			_, err = os.Stat(a.HostPath(h, "/"))
			require.ErrorIs(t, err, os.ErrNotExist, "its directory is gone")
			require.NoError(t, a.Destroy(ctx, h), "destroying again is fine")

			box(t, a, "doomed-once")
			require.NoError(t, a.DestroyOnce(ctx, a.BuildHandle("doomed-once"), paddock.DestroyOnceOpts{}))
			require.NoError(t, a.DestroyOnce(ctx, a.BuildHandle("doomed-once"), paddock.DestroyOnceOpts{}), "absence is confirmed")
		})
	}
}

func TestCreateNewIsAtomic(t *testing.T) {
	t.Parallel()
	a := newLocal(t)
	var wg sync.WaitGroup
	results := make([]error, 16)
	ids := make([]string, 16)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := a.CreateNew(ctx, "contested", paddock.CreateNewOpts{})
			results[i], ids[i] = err, h.InstanceID
		}()
	}
	wg.Wait()
	wins := 0
	for i, err := range results {
		if err == nil {
			wins++
			assert.Regexp(t, `^local-[0-9a-f]{16}$`, ids[i])
			continue
		}
		require.ErrorIs(t, err, paddock.ErrAlreadyExists)
	}
	assert.Equal(t, 1, wins)
	_, err := a.Create(ctx, "contested", paddock.CreateOpts{})
	require.NoError(t, err, "Create adopts")
	_, err = a.Create(ctx, "bad", paddock.CreateOpts{Params: map[string]string{"image": "x"}})
	require.ErrorIs(t, err, paddock.ErrInvalid, "an unknown parameter")
	names, err := a.ListAllNames(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"contested"}, names)

	odd := "a name with spaces & symbols!"
	box(t, a, odd)
	names, err = a.ListAllNames(ctx)
	require.NoError(t, err)
	assert.Contains(t, names, odd, "any valid name round-trips")
}

func TestFinishedSessionsArePruned(t *testing.T) {
	t.Parallel()
	a := newLocal(t, withFinishedSessions(3))
	h := box(t, a, "busy")
	for i := 0; i < 6; i++ {
		out, _ := execOut(t, a, h, "true") // exec keeps no session
		assert.Empty(t, out)
		st := sh(t, a, h, "echo "+itoa(i), paddock.SpawnOpts{})
		events(t, st, 5*time.Second)
	}
	require.Eventually(t, func() bool {
		sessions, err := a.ListSessions(ctx, h)
		return err == nil && len(sessions) == 3
	}, time.Minute, 10*time.Millisecond, "only the newest finished sessions are kept")
}

func TestStdinSemantics(t *testing.T) {
	t.Parallel()
	a := newLocal(t)
	h := box(t, a, "stdin")
	noStdin := sh(t, a, h, "echo hi", paddock.SpawnOpts{})
	events(t, noStdin, 5*time.Second)
	require.ErrorIs(t, noStdin.WriteStdin(ctx, []byte("x")), paddock.ErrCommandExited, "after the exit")
	require.NoError(t, noStdin.CloseStdin(ctx), "closing after the exit is ok")

	cat := sh(t, a, h, "cat", paddock.SpawnOpts{Stdin: true})
	for _, part := range []string{"one ", "two ", "three"} {
		require.NoError(t, cat.WriteStdin(ctx, []byte(part)))
	}
	require.NoError(t, cat.CloseStdin(ctx))
	require.ErrorIs(t, cat.WriteStdin(ctx, []byte("late")), paddock.ErrWriteFailed, "stdin was closed")
	assert.Equal(t, "one two three", stdout(events(t, cat, 5*time.Second)), "writes arrive in order")

	ro := sh(t, a, h, "sleep 5", paddock.SpawnOpts{})
	require.ErrorIs(t, ro.WriteStdin(ctx, []byte("x")), paddock.ErrWriteFailed, "stdin was not requested")
	require.NoError(t, ro.Close())
	require.ErrorIs(t, ro.WriteStdin(ctx, []byte("x")), paddock.ErrCommandExited, "a detached subscriber")
}

// An exec past its deadline is killed, not merely abandoned (unisolated,
// where nothing but the adapter could stop it): afterwards no process of
// the sandbox is left (found in /proc by the sandbox marker), so nothing can
// touch the marker file.
func TestExecTimeoutKillsTheCommand(t *testing.T) {
	t.Parallel()
	a := newLocal(t, withIsolation(local.IsolationNone))
	name := "slow-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	killMarked(t, name)
	h := box(t, a, name)
	start := time.Now()
	_, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", "sleep 30; touch alive"), paddock.ExecOpts{Timeout: paddock.Duration(300 * time.Millisecond)})
	var et *paddock.ExecTimeoutError
	require.ErrorAs(t, err, &et)
	assert.Equal(t, 300*time.Millisecond, et.Timeout)
	assert.Less(t, time.Since(start), 20*time.Second, "the deadline ends the exec, not the command's own end")
	assert.Eventually(t, func() bool { return len(sandboxProcesses(name)) == 0 }, time.Minute, 5*time.Millisecond,
		"the command was killed with its deadline: left %v", sandboxProcesses(name))
	_, err = os.Stat(a.HostPath(h, "/alive"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// lastTick is the number of the last "tick N" line in data (0 for none).
func lastTick(t testing.TB, data []byte) int {
	t.Helper()
	last := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if n, ok := strings.CutPrefix(line, "tick "); ok {
			v, err := strconv.Atoi(n)
			require.NoError(t, err, "a tick line: %q", line)
			last = v
		}
	}
	return last
}
