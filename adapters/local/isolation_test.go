//go:build unix

package local_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
