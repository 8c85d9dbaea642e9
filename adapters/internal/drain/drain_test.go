//go:build linux

package drain_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/paddockhq/paddock/adapters/internal/drain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// command is a shell command started on a pipe of ours, with a reader
// that may be held back.
type command struct {
	cmd  *exec.Cmd
	r    *os.File
	obj  drain.Object
	out  bytes.Buffer
	done chan struct{}
	go_  chan struct{} // closed to let the reader read
}

// start runs script with stdout on a new pipe, in its own session (so no
// process group kill reaches what it leaves), and a reader that starts
// reading once released.
func start(t *testing.T, script string, released bool) *command {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	obj, err := drain.ObjectOf(r)
	require.NoError(t, err)
	c := &command{cmd: exec.Command("sh", "-c", script), r: r, obj: obj, done: make(chan struct{}), go_: make(chan struct{})}
	c.cmd.Stdout = w
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	require.NoError(t, c.cmd.Start())
	require.NoError(t, w.Close())
	if released {
		close(c.go_)
	}
	go func() {
		defer close(c.done)
		<-c.go_
		_, _ = io.Copy(&c.out, r)
	}()
	t.Cleanup(func() { _ = r.Close() })
	return c
}

func (c *command) output() drain.Output {
	return drain.Output{Files: []*os.File{c.r}, Held: []drain.Object{c.obj}, Done: c.done}
}

// leftover is the pid a script printed on its first line ("pid N").
func leftover(t *testing.T, out string) int {
	t.Helper()
	line, _, _ := strings.Cut(out, "\n")
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "pid "))
	require.NoError(t, err, "output %q", out)
	return pid
}

// alive reports whether pid runs (a zombie counts as gone).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z'
}

// recorder kills holders as KillHolder does, and records whom.
type recorder struct {
	mu     sync.Mutex
	killed []int
}

func (r *recorder) kill(pid int, o drain.Object) error {
	r.mu.Lock()
	r.killed = append(r.killed, pid)
	r.mu.Unlock()
	return drain.KillHolder(pid, o)
}

func (r *recorder) pids() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Compact(slices.Sorted(slices.Values(r.killed)))
}

func TestDrainReadsEverythingAWellBehavedCommandWrote(t *testing.T) {
	t.Parallel()
	c := start(t, "seq 1 20000", true)
	require.NoError(t, c.cmd.Wait())
	killed := 0
	complete := drain.Drain(c.output(), drain.Policy{Grace: time.Minute, Limit: time.Second,
		Kill: func(int, drain.Object) error { killed++; return nil }})
	assert.True(t, complete)
	assert.Equal(t, 108894, c.out.Len())
	assert.Zero(t, killed, "nobody held the output")
}

// A reader that is not scheduled before the grace ends must still get
// every byte: no writer is left, so nothing is cut.
func TestDrainWaitsForASlowReaderOnceNoWriterIsLeft(t *testing.T) {
	t.Parallel()
	c := start(t, "seq 1 10000", false) // 48,894 bytes: the pipe holds them all
	require.NoError(t, c.cmd.Wait())
	result := make(chan bool, 1)
	go func() {
		result <- drain.Drain(c.output(), drain.Policy{Grace: time.Millisecond, Limit: 20 * time.Millisecond})
	}()
	// Far past the grace and the limit, the output is still open and Drain
	// still waits for its reader.
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		select {
		case <-result:
			require.Fail(t, "Drain returned before its reader read anything")
		default:
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(c.go_)
	assert.True(t, <-result)
	assert.Equal(t, 48894, c.out.Len(), "every byte written before the exit is read")
}

// A process that escaped the command's group and keeps the pipe open is
// killed after the grace; what was written before is kept.
func TestDrainKillsALeftoverHoldingTheOutput(t *testing.T) {
	t.Parallel()
	c := start(t, `sleep 1000 & echo pid $!; seq 1 5000`, true)
	require.NoError(t, c.cmd.Wait())
	var killed recorder
	require.True(t, drain.Drain(c.output(), drain.Policy{Grace: 10 * time.Millisecond, Limit: 5 * time.Second, Kill: killed.kill}))
	pid := leftover(t, c.out.String())
	assert.Eventually(t, func() bool { return !alive(pid) }, time.Minute, time.Millisecond, "the leftover holding the output is gone")
	assert.Equal(t, []int{pid}, killed.pids(), "killed as the holder of the output")
	assert.True(t, strings.HasSuffix(c.out.String(), "4999\n5000\n"))
}

// A caller that gives up (a deadline) ends the grace at once.
func TestDrainAbortEndsTheGrace(t *testing.T) {
	t.Parallel()
	c := start(t, `sleep 1000 & echo pid $!`, true)
	require.NoError(t, c.cmd.Wait())
	abort := make(chan struct{})
	close(abort)
	var killed recorder
	require.True(t, drain.Drain(c.output(), drain.Policy{Grace: time.Hour, Limit: 5 * time.Second, Abort: abort, Kill: killed.kill}))
	assert.Equal(t, []int{leftover(t, c.out.String())}, killed.pids())
}

// A leftover that closed the output (a daemon writing elsewhere) is left
// alone.
func TestDrainLeavesAProcessThatClosedTheOutput(t *testing.T) {
	t.Parallel()
	c := start(t, `sleep 1000 >/dev/null & echo pid $!`, true)
	require.NoError(t, c.cmd.Wait())
	require.True(t, drain.Drain(c.output(), drain.Policy{Grace: 10 * time.Millisecond, Limit: time.Second}))
	pid := leftover(t, c.out.String())
	defer syscall.Kill(pid, syscall.SIGKILL)
	assert.True(t, alive(pid))
}

// A holder that survives the kill for the whole limit makes the output
// incomplete: the read end is cut and Drain says so.
func TestDrainReportsAnOutputItHadToCut(t *testing.T) {
	t.Parallel()
	c := start(t, `sleep 1000 & echo pid $!`, true)
	require.NoError(t, c.cmd.Wait())
	var mu sync.Mutex
	asked := map[int]drain.Object{}
	complete := drain.Drain(c.output(), drain.Policy{Grace: time.Millisecond, Limit: 50 * time.Millisecond,
		Kill: func(pid int, o drain.Object) error { mu.Lock(); asked[pid] = o; mu.Unlock(); return nil }})
	assert.False(t, complete)
	pid := leftover(t, c.out.String())
	defer syscall.Kill(pid, syscall.SIGKILL)
	assert.Equal(t, map[int]drain.Object{pid: c.obj}, asked, "exactly the holder was to be killed")
}

// The group kill comes after the grace, and only when the output is still
// held.
func TestDrainKillsTheGroupOnlyWhenTheOutputIsHeld(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		script string
		kills  int
	}{
		"held":     {`sleep 1000 & echo pid $!`, 1},
		"not held": {`echo pid $$`, 0},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := start(t, tc.script, true)
			require.NoError(t, c.cmd.Wait())
			kills := 0
			drain.Drain(c.output(), drain.Policy{Grace: time.Millisecond, Limit: 5 * time.Second,
				KillGroup: func() { kills++ }})
			assert.Equal(t, tc.kills, kills)
		})
	}
}

// A leftover holding a terminal's slave side is found and killed the same
// way. (When the terminal is the session's controlling one, the leader's
// exit hangs it up and nobody holds it any more; here it is not.)
func TestDrainKillsALeftoverHoldingATerminal(t *testing.T) {
	t.Parallel()
	master, tty, err := pty.Open()
	require.NoError(t, err)
	defer master.Close()
	obj, err := drain.ObjectOf(tty)
	require.NoError(t, err)
	cmd := exec.Command("sh", "-c", `sleep 1000 & echo pid $!`)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	require.NoError(t, cmd.Start())
	require.NoError(t, tty.Close())
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { defer close(done); _, _ = io.Copy(&out, master) }()
	require.NoError(t, cmd.Wait())
	var killed recorder
	require.True(t, drain.Drain(drain.Output{Files: []*os.File{master}, Held: []drain.Object{obj}, Done: done},
		drain.Policy{Grace: 10 * time.Millisecond, Limit: 5 * time.Second, Kill: killed.kill}))
	pid := leftover(t, strings.ReplaceAll(out.String(), "\r", ""))
	assert.Eventually(t, func() bool { return !alive(pid) }, time.Minute, time.Millisecond)
	assert.Equal(t, []int{pid}, killed.pids(), "killed as the holder of the terminal")
}

func TestHoldersListsOnlyLeftoversHoldingTheObject(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	obj, err := drain.ObjectOf(r)
	require.NoError(t, err)
	pidFile := t.TempDir() + "/pid"
	// A leftover: the shell's background child, holding the pipe once the
	// shell is gone (so it descends from the command, not from us).
	shell := exec.Command("sh", "-c", `sleep 1000 & echo $! > "$1"`, "sh", pidFile)
	shell.Stdout = w
	require.NoError(t, shell.Run())
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	leftover, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	defer syscall.Kill(leftover, syscall.SIGKILL)
	// Our own child holding it too (as a child between fork and exec holds
	// every descriptor of ours), and a process holding nothing of it.
	ours := exec.Command("sleep", "1000")
	ours.Stdout = w
	other := exec.Command("sleep", "1000")
	for _, c := range []*exec.Cmd{ours, other} {
		require.NoError(t, c.Start())
		defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
	}
	require.NoError(t, w.Close())
	assert.Equal(t, map[int]drain.Object{leftover: obj}, drain.Holders([]drain.Object{obj}),
		"the leftover only: never this process (it holds the read end) nor its own children")
	require.NoError(t, drain.KillHolder(ours.Process.Pid, obj))
	assert.True(t, alive(ours.Process.Pid), "KillHolder spares a child of ours")
}

// KillHolder never signals a process that does not hold the object, such
// as a stranger that reused a holder's pid.
func TestKillHolderSparesAProcessNotHoldingTheObject(t *testing.T) {
	t.Parallel()
	c := start(t, "true", true)
	require.NoError(t, c.cmd.Wait())
	stranger := exec.Command("sleep", "1000")
	require.NoError(t, stranger.Start())
	defer func() { _ = stranger.Process.Kill(); _ = stranger.Wait() }()
	require.NoError(t, drain.KillHolder(stranger.Process.Pid, c.obj))
	assert.True(t, alive(stranger.Process.Pid))
}

// A holder nobody can see or kill (here a child of this process's own, as
// one between fork and exec is, which Holders never lists) does not spend
// the kill's Limit: the output is read to its end once it lets go, within
// the larger Unseen bound.
func TestDrainWaitsLongerForAHolderItCannotSee(t *testing.T) {
	t.Parallel()
	c := start(t, `echo before`, false)
	require.NoError(t, c.cmd.Wait())
	// The write end, held by a child of ours: invisible to Holders. (The
	// reader starts once it is held, so it cannot see the end before.)
	w, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(c.r.Fd())), os.O_WRONLY, 0)
	require.NoError(t, err, "a second write end of the pipe")
	holder := exec.Command("sleep", "1000")
	holder.ExtraFiles = []*os.File{w}
	require.NoError(t, holder.Start())
	require.NoError(t, w.Close())
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	close(c.go_)

	const limit = 20 * time.Millisecond
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(10 * limit) // well past the kill's Limit
		_ = holder.Process.Kill()
		_ = holder.Wait()
	}()
	complete := drain.Drain(c.output(), drain.Policy{Grace: time.Millisecond, Limit: limit, Unseen: time.Minute})
	<-released
	assert.True(t, complete, "the output was read to its end, not cut at the Limit")
	assert.Equal(t, "before\n", c.out.String())
}
