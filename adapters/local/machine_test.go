//go:build unix

package local_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/adapters/local/localtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// needTools fails the test under CI (which installs them) and skips it
// elsewhere when one of the programs a sandbox would run is missing.
func needTools(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		found := false
		for _, dir := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				found = true
			}
		}
		if !found {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (CI installs it)", name)
			}
			t.Skipf("%s is not installed here", name)
		}
	}
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

// httpStatus fetches url with curl from inside the sandbox and returns
// curl's output (the status) and exit code.
func httpStatus(t *testing.T, a *local.Adapter, h paddock.Handle, url string) (string, int) {
	t.Helper()
	res, err := a.Exec(ctx, h, paddock.NewCmd("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5", url), paddock.ExecOpts{})
	require.NoError(t, err)
	return string(res.Stdout), res.ExitCode
}

// A sandbox is one machine: a server one command starts answers another
// command's request over loopback, and one command sees the other's
// processes. Under isolation a second sandbox sees neither.
func TestCommandsOfASandboxShareIt(t *testing.T) {
	t.Parallel()
	needTools(t, "python3", "curl", "ps")
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			a := newLocal(t, opt)
			h := box(t, a, "web")
			port := 9017
			if mode == "unisolated" { // the host's loopback, shared with everything else
				port = freePort(t)
			}
			server := sh(t, a, h, fmt.Sprintf("exec python3 -m http.server %d --bind 127.0.0.1", port), paddock.SpawnOpts{})
			url := fmt.Sprintf("http://127.0.0.1:%d/", port)
			var status string
			var code int
			require.Eventually(t, func() bool {
				status, code = httpStatus(t, a, h, url)
				return status == "200"
			}, 30*time.Second, 50*time.Millisecond, "the server answers a second command (last: %q, curl exit %d)", status, code)

			out, code := execOut(t, a, h, "ps ax -o args=")
			require.Equal(t, 0, code)
			assert.Contains(t, out, "http.server", "one command sees the other's process")

			if mode != "unisolated" {
				other := box(t, a, "elsewhere")
				status, code := httpStatus(t, a, other, url)
				assert.Equal(t, 7, code, "another sandbox cannot reach its loopback (curl answered %q)", status)
				out, _ := execOut(t, a, other, "ps ax -o args=")
				assert.NotContains(t, out, "http.server", "nor see its processes")
			}
			require.NoError(t, a.TerminateSession(ctx, h, server.SessionID(), paddock.TerminateOpts{}))
		})
	}
}

// daemons starts the three kinds of process that leave their command: a
// setsid daemon, a double fork and a nohup one, each with nothing of the
// command's output, then prints "up".
const daemons = `setsid sleep 1000 </dev/null >/dev/null 2>&1 &
(sleep 1000 </dev/null >/dev/null 2>&1 &) 
nohup sleep 1000 </dev/null >/dev/null 2>&1 &
echo up`

// sandboxProcesses lists the processes, read from /proc (not from the
// adapter), whose environment carries the sandbox marker of name.
func sandboxProcesses(name string) []int {
	marker := []byte("\x00PADDOCK_SANDBOX=" + name + "\x00")
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append([]byte{0}, env...), marker) {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				continue // a zombie is gone
			}
		}
		out = append(out, pid)
	}
	return out
}

// killMarked kills whatever carries the marker when the test ends, in case
// it survived.
func killMarked(t *testing.T, name string) {
	t.Cleanup(func() {
		for _, pid := range sandboxProcesses(name) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// Nothing of a sandbox survives its terminate, destroy, the adapter's
// close or the end of the program, whatever its commands left behind.
func TestNothingOfASandboxSurvives(t *testing.T) {
	t.Parallel()
	for mode, opt := range isolationModes(t) {
		for _, end := range []string{"terminate", "destroy", "close", "program end"} {
			t.Run(mode+"/"+end, func(t *testing.T) {
				t.Parallel()
				if end == "terminate" && !local.SessionsHaveCgroups() {
					t.Skip("a session's daemons are found through its cgroup, which needs root and cgroup v2")
				}
				name := "escape-" + strconv.FormatInt(time.Now().UnixNano(), 36)
				killMarked(t, name)
				if end == "program end" {
					programEnd(t, mode, name)
					return
				}
				a, err := local.New(config(withRoot(t.TempDir()), opt))
				require.NoError(t, err)
				closed := false
				t.Cleanup(func() {
					if !closed {
						_ = a.Close()
					}
				})
				h := box(t, a, name)
				script := daemons
				if end == "terminate" {
					script += "; exec sleep 1000" // the session still runs
				}
				st := sh(t, a, h, script, paddock.SpawnOpts{})
				require.Equal(t, "up\n", string(next(t, st).Data))
				require.Eventually(t, func() bool { return len(sandboxProcesses(name)) >= 3 }, time.Minute, 5*time.Millisecond,
					"the daemons run")
				switch end {
				case "terminate":
					require.NoError(t, a.TerminateSession(ctx, h, st.SessionID(), paddock.TerminateOpts{}))
				case "destroy":
					assert.Equal(t, "exit:0", terminal(events(t, st, 10*time.Second)), "the command itself ended")
					require.NoError(t, a.Destroy(ctx, h))
				case "close":
					require.NoError(t, a.Close())
					closed = true
				}
				assert.Eventually(t, func() bool { return len(sandboxProcesses(name)) == 0 }, time.Minute, 5*time.Millisecond,
					"left: %v", sandboxProcesses(name))
			})
		}
	}
}

// programEnd runs a program (this test binary as a helper) that starts the
// daemons in a sandbox, then kills it outright: nothing may be left.
func programEnd(t *testing.T, mode, name string) {
	isolation := local.IsolationNone
	if mode != "unisolated" {
		isolation = local.IsolationNamespaces
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), helperEnv+"=daemons", "HELPER_ROOT="+t.TempDir(),
		"HELPER_ISOLATION="+string(isolation), "HELPER_SANDBOX="+name)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "up\n", line)
	require.Eventually(t, func() bool { return len(sandboxProcesses(name)) >= 3 }, time.Minute, 5*time.Millisecond)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	assert.Eventually(t, func() bool { return len(sandboxProcesses(name)) == 0 }, time.Minute, 5*time.Millisecond,
		"left: %v", sandboxProcesses(name))
}

// daemonsHelper is the program programEnd kills.
func daemonsHelper() int {
	a, err := local.New(config(withRoot(os.Getenv("HELPER_ROOT")), withIsolation(local.Isolation(os.Getenv("HELPER_ISOLATION")))))
	if err != nil {
		fmt.Println("new:", err)
		return 1
	}
	h, err := a.Create(ctx, os.Getenv("HELPER_SANDBOX"), paddock.CreateOpts{})
	if err != nil {
		fmt.Println("create:", err)
		return 1
	}
	res, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", daemons), paddock.ExecOpts{})
	if err != nil {
		fmt.Println("exec:", err)
		return 1
	}
	fmt.Print(string(res.Stdout))
	time.Sleep(time.Hour)
	return 0
}

// Commands take as many arguments as os/exec takes; one the kernel
// refuses is invalid, not transient.
func TestLargeCommands(t *testing.T) {
	t.Parallel()
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			a := newLocal(t, opt)
			h := box(t, a, "args")
			args := []string{"-c", `echo $# ${#1}`, "sh"}
			for range 200 {
				args = append(args, strings.Repeat("a", 1000))
			}
			res, err := a.Exec(ctx, h, paddock.NewCmd("sh", args...), paddock.ExecOpts{})
			require.NoError(t, err)
			assert.Equal(t, "200 1000\n", string(res.Stdout))

			st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", args...), paddock.SpawnOpts{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			assert.Equal(t, "200 1000\n", stdout(events(t, st, 10*time.Second)))

			// One argument over the kernel's 128 KiB per-string limit.
			_, err = a.Exec(ctx, h, paddock.NewCmd("echo", strings.Repeat("b", 200<<10)), paddock.ExecOpts{})
			require.ErrorIs(t, err, paddock.ErrInvalid)
			assert.False(t, paddock.IsTransient(err))
			assert.Contains(t, err.Error(), "argument list too long")
		})
	}
}

// Suspend stops every process of the sandbox, what its commands left
// behind included, and resume continues them.
func TestSuspendReachesTheWholeSandbox(t *testing.T) {
	t.Parallel()
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			name := "frozen-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			killMarked(t, name)
			a := newLocal(t, opt)
			h := box(t, a, name)
			st := sh(t, a, h, daemons, paddock.SpawnOpts{})
			assert.Equal(t, "exit:0", terminal(events(t, st, 10*time.Second)), "the command left its daemons and ended")
			require.Eventually(t, func() bool { return len(sandboxProcesses(name)) >= 3 }, time.Minute, 5*time.Millisecond)
			state := func(want byte) bool {
				pids := sandboxProcesses(name)
				for _, pid := range pids {
					b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
					i := bytes.LastIndexByte(b, ')')
					if err != nil || i < 0 || i+2 >= len(b) || (b[i+2] == 'T') != (want == 'T') {
						return false
					}
				}
				return len(pids) >= 3
			}
			require.NoError(t, a.Suspend(ctx, h))
			assert.Eventually(t, func() bool { return state('T') }, time.Minute, 5*time.Millisecond, "every daemon is stopped")
			_, err := a.Resume(ctx, h)
			require.NoError(t, err)
			assert.Eventually(t, func() bool { return state('S') }, time.Minute, 5*time.Millisecond, "and runs again")
		})
	}
}

// A machine whose init dies takes its commands along (their sessions end
// with closed_before_exit, never an exit), and the sandbox's next command
// gets a fresh machine.
func TestAMachineThatDiesIsReplaced(t *testing.T) {
	t.Parallel()
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			a := newLocal(t, opt)
			h := box(t, a, "fragile")
			st := sh(t, a, h, "echo up; exec sleep 1000", paddock.SpawnOpts{})
			require.Equal(t, "up\n", string(next(t, st).Data))
			pid := a.MachinePID(h)
			require.NotZero(t, pid)
			require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
			evs := events(t, st, 30*time.Second)
			require.ErrorIs(t, evs[len(evs)-1].Err, paddock.ErrClosedBeforeExit, "terminal %s", terminal(evs))

			out, code := execOut(t, a, h, "echo again")
			assert.Equal(t, "again\n", out)
			assert.Equal(t, 0, code)
			assert.NotEqual(t, pid, a.MachinePID(h), "a new machine")
		})
	}
}

// A command holds nothing of its machine: only its stdin, stdout and
// stderr are open in it.
func TestCommandsInheritOnlyTheirStdio(t *testing.T) {
	t.Parallel()
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			a := newLocal(t, opt)
			h := box(t, a, "fds")
			// ls itself opens the directory it lists; the rest is inherited.
			out, code := execOut(t, a, h, "exec ls /proc/self/fd")
			require.Equal(t, 0, code)
			assert.Equal(t, []string{"0", "1", "2", "3"}, strings.Fields(out))
			st := sh(t, a, h, "exec ls /proc/self/fd", paddock.SpawnOpts{Stdin: true})
			assert.Equal(t, []string{"0", "1", "2", "3"}, strings.Fields(stdout(events(t, st, 10*time.Second))))
		})
	}
}

// isolated returns an adapter that requires namespaces, or fails the test
// where the host cannot provide them (CI runs as root, where it can).
func isolated(t *testing.T, opts ...option) *local.Adapter {
	a := newLocal(t, append([]option{withIsolation(local.IsolationNamespaces)}, opts...)...)
	ok, why := a.Isolated()
	require.True(t, ok, "namespace isolation unavailable: %s", why)
	return a
}

func TestIsolatedCommandsSeeTheirOwnWorld(t *testing.T) {
	t.Parallel()
	a := isolated(t)
	h := box(t, a, "iso")
	// /proc/net/dev lists the interfaces of the reader's network namespace.
	out, code := execOut(t, a, h, `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '`)
	require.Equal(t, 0, code)
	assert.Equal(t, "lo\n", out, "only loopback")
	out, _ = execOut(t, a, h, `tr '\0' ' ' < /proc/1/cmdline; echo; hostname`)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	assert.Equal(t, "paddock-init", strings.TrimSpace(lines[0]), "PID 1 is the sandbox's own init")
	assert.Equal(t, "paddock-iso", lines[1], "its own host name")
	out, _ = execOut(t, a, h, `ls /proc | grep -c '^[0-9]'`)
	assert.LessOrEqual(t, atoi(t, strings.TrimSpace(out)), 4, "it sees only its own processes")

	// Loopback works, and nothing else is reachable.
	assert.Equal(t, "pong\n", helper(t, a, h, "loopback"), "loopback is up")
	assert.Equal(t, "unreachable\n", helper(t, a, h, "dial-out"), "no route out")

	open := box(t, a, "open", "egress", "unrestricted")
	out, _ = execOut(t, a, open, `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\n' ' '`)
	assert.NotEqual(t, "lo ", out, "unrestricted egress keeps the host's interfaces")
	assert.Equal(t, "pong\n", helper(t, a, open, "loopback"))

	info, err := a.Get(ctx, h)
	require.NoError(t, err)
	assert.Contains(t, string(info.Raw), `"isolated":true`)
}

func TestUnisolatedSaysSo(t *testing.T) {
	t.Parallel()
	a := newLocal(t, withIsolation(local.IsolationNone))
	h := box(t, a, "plain")
	info, err := a.Get(ctx, h)
	require.NoError(t, err)
	assert.Contains(t, string(info.Raw), `"isolated":false`)
	assert.Contains(t, string(info.Raw), `"isolation_reason":"disabled by configuration"`)
}

func TestForkBombIsStoppedByTheProcessLimit(t *testing.T) {
	t.Parallel()
	const limit = 64
	a := isolated(t, withProcessLimit(limit))
	h := box(t, a, "bomb")
	// Every process of this bomb waits for its children, and bash retries a
	// failed fork, so without a limit it would grow until the host gave out.
	st, err := a.Spawn(ctx, h, paddock.NewCmd("bash", "-c", `f(){ f & f & wait; }; f`), paddock.SpawnOpts{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	sessions, err := a.ListSessions(ctx, h)
	require.NoError(t, err)
	require.Len(t, sessions, 1)
	id := sessions[0].ID

	// Sample the sandbox's processes while the bomb runs, and check the
	// host answers meanwhile.
	peak := 0
	other := box(t, a, "host-check")
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); {
		peak = max(peak, a.CountProcesses(h, id))
		start := time.Now()
		out, code := execOut(t, a, other, "echo responsive")
		require.Equal(t, "responsive\n", out)
		require.Equal(t, 0, code)
		require.Less(t, time.Since(start), time.Minute, "the host stays responsive")
	}
	require.NoError(t, a.TerminateSession(ctx, h, id, paddock.TerminateOpts{Mode: paddock.TerminateForce}))
	evs := events(t, st, 10*time.Second)
	t.Logf("fork bomb: peak %d processes sampled (limit %d), then %s", peak, limit, terminal(evs))
	assert.LessOrEqual(t, peak, limit, "the limit holds")
	assert.Greater(t, peak, limit/2, "the bomb really pressed against the limit")
	var stderr strings.Builder
	for _, ev := range evs {
		if ev.Kind == paddock.EventStderr {
			stderr.Write(ev.Data)
		}
	}
	assert.Contains(t, stderr.String(), "fork", "forks beyond the limit are refused")
	assert.Equal(t, "exit:137", terminal(evs))
	assert.Zero(t, a.CountProcesses(h, id), "nothing of it is left")
}

func atoi(t *testing.T, s string) int {
	n := 0
	for _, c := range s {
		require.True(t, c >= '0' && c <= '9', "not a number: %q", s)
		n = n*10 + int(c-'0')
	}
	return n
}

// helper runs the test binary as a helper program inside the sandbox.
func helper(t *testing.T, a *local.Adapter, h paddock.Handle, name string) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	res, err := a.Exec(ctx, h, paddock.Cmd{Path: exe, Env: []paddock.EnvVar{{Name: helperEnv, Value: name}}}, paddock.ExecOpts{})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "helper %s: %s", name, res.Stdout)
	return string(res.Stdout)
}

// A sandbox whose init is the program of its own runs its commands, and
// the init is that program.
func TestInitProgram(t *testing.T) {
	t.Parallel()
	path := localtest.InitProgram(t)
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			a := newLocal(t, opt, withInitProgram(path))
			h := box(t, a, "own-init")
			out, code := execOut(t, a, h, "echo hello")
			assert.Equal(t, "hello\n", out)
			assert.Equal(t, 0, code)
			_, code = execOut(t, a, h, "no-such-program-here")
			assert.Equal(t, 127, code, "a program that cannot run exits as under a shell, played by the init program")
			exe, err := os.Readlink("/proc/" + itoa(a.MachinePID(h)) + "/exe")
			require.NoError(t, err)
			assert.Equal(t, path, exe)
		})
	}
}

func TestInitProgramMustExist(t *testing.T) {
	t.Parallel()
	_, err := local.New(config(withRoot(t.TempDir()), withInitProgram(filepath.Join(t.TempDir(), "missing"))))
	var invalid *paddock.InvalidError
	require.ErrorAs(t, err, &invalid)
	assert.Contains(t, invalid.Detail, "init program")
}

// An init that speaks another protocol (a program of another version)
// refuses to start, saying why.
func TestInitOfAnotherProtocolRefuses(t *testing.T) {
	t.Parallel()
	err := local.StartMachineSpeaking(99)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "protocol")
}
