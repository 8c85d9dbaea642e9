package docker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/paddockhq/paddock/adapters/docker/dockertest"
	"github.com/stretchr/testify/require"
)

// Under gVisor when the engine has runsc: the guest kernel is gVisor's and
// the adapter's whole command path works there. Without it, asking for
// runsc is a clear invalid error (never a silent fall back to runc), and
// the rest is skipped, saying why.
func TestRunsc(t *testing.T) {
	t.Parallel()
	// Under gVisor the engine's process limit also counts the sandbox
	// kernel's own threads and stubs: it needs room beyond the guest's.
	a := newAdapter(t, func(c *docker.Config) { c.Runtime = docker.RuntimeRunsc; c.MaxProcesses = 1024 })
	ctx := ctxFor(t, 3*time.Minute)
	h := runscSandbox(t, a, "gvisor")
	out, code := execOut(t, a, h, "dmesg")
	require.Equal(t, 0, code)
	require.Contains(t, out, "gVisor", "the guest kernel is gVisor's")

	// The session machinery (setsid, FIFOs, the journal) under gVisor.
	st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", "echo ready; exec cat"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	defer st.Close()
	ev, err := st.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, "ready\n", string(ev.Data))
	require.NoError(t, st.WriteStdin(ctx, []byte("ping\n")))
	ev, err = st.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, "ping\n", string(ev.Data))
	at, err := a.Attach(ctx, h, st.SessionID(), paddock.AttachOpts{})
	require.NoError(t, err)
	defer at.Close()
	ev, err = at.Next(ctx)
	require.NoError(t, err)
	require.Contains(t, string(ev.Data), "ready", "replayed from byte zero")
	require.NoError(t, a.TerminateSession(ctx, h, st.SessionID(), paddock.TerminateOpts{Mode: paddock.TerminateForce, Timeout: paddock.Duration(paddock.MaxTerminateTimeout)}))
	for {
		ev, err = st.Next(ctx)
		require.NoError(t, err)
		if ev.Kind.Terminal() {
			break
		}
	}
	require.Equal(t, paddock.Exit(137), ev)

	require.NoError(t, a.WriteFile(ctx, h, "/workspace/f", 0o644, strings.NewReader("under gvisor")))
	out, _ = execOut(t, a, h, "cat", "/workspace/f")
	require.Equal(t, "under gvisor", out)
	res, err := a.Exec(ctx, h, paddock.NewCmd("sleep", "60"), paddock.ExecOpts{Timeout: paddock.Duration(time.Second)})
	require.ErrorIs(t, err, paddock.ErrExecTimeout, "%v", res)
	out, _ = execOut(t, a, h, "sh", "-c", "ps -o args | grep -cx 'sleep 60' || true")
	require.Equal(t, "0\n", out, "the timed-out sleep was killed")
}

// Under gVisor too, an image's own /tmp and root-owned /workspace are the
// sandbox user's scratch (gVisor's tmpfs takes the uid and gid options).
func TestRunscOnADistroShapedImage(t *testing.T) {
	t.Parallel()
	a := newAdapter(t, func(c *docker.Config) {
		c.Runtime, c.MaxProcesses, c.Image, c.Watch = docker.RuntimeRunsc, 1024, dockertest.DistroImage, false
	})
	h := runscSandbox(t, a, "gvisor-distro")
	out, code := execOut(t, a, h, "sh", "-c", `touch /tmp/a /workspace/b "$HOME/.c" && echo writable; stat -c '%u' /tmp /workspace`)
	require.Equal(t, 0, code, out)
	require.Equal(t, "writable\n1000\n1000\n", out)
}

// runscSandbox creates a sandbox under runsc, destroyed when the test
// ends; an engine without runsc skips the test (the refusal checked).
func runscSandbox(t *testing.T, a *docker.Adapter, name string) paddock.Handle {
	t.Helper()
	h, err := a.Create(ctxFor(t, 3*time.Minute), name, paddock.CreateOpts{})
	if errors.Is(err, paddock.ErrInvalid) && strings.Contains(err.Error(), "runsc") {
		t.Skipf("the engine has no runsc runtime (asking for it is refused as it must be: %v)", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, a.Destroy(ctx, h))
	})
	return h
}
