package docker_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/paddockhq/paddock/adapters/docker/dockertest"
	"github.com/stretchr/testify/require"
)

// sandbox creates a fresh sandbox with params, destroyed when the test
// ends.
func sandbox(t testing.TB, a *docker.Adapter, name string, params map[string]string) paddock.Handle {
	t.Helper()
	h, err := a.Create(ctxFor(t, time.Minute), name, paddock.CreateOpts{Params: params})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, a.Destroy(ctx, h))
	})
	return h
}

func execOut(t testing.TB, a *docker.Adapter, h paddock.Handle, argv ...string) (string, int) {
	t.Helper()
	res, err := a.Exec(ctxFor(t, time.Minute), h, paddock.NewCmd(argv[0], argv[1:]...), paddock.ExecOpts{StderrToStdout: true})
	require.NoError(t, err)
	return string(res.Stdout), res.ExitCode
}

// The container is what the design says, as the engine reports it.
func TestContainerIsHardened(t *testing.T) {
	t.Parallel()
	a := newAdapter(t)
	before := time.Now()
	h := sandbox(t, a, "hardened", map[string]string{"memory_mb": "128", "disk_mb": "32", "max_processes": "64", "cpus": "0.5"})
	cli, err := client.New(client.FromEnv)
	require.NoError(t, err)
	defer cli.Close()
	res, err := cli.ContainerInspect(ctxFor(t, 10*time.Second), docker.ContainerName(h.Name), client.ContainerInspectOptions{})
	require.NoError(t, err)
	info, err := a.Get(ctxFor(t, 10*time.Second), h)
	require.NoError(t, err)
	require.Equal(t, "hardened", info.Name)
	require.Equal(t, res.Container.ID, info.ID, "the container's id")
	require.Equal(t, dockertest.Image(t), info.Image)
	require.False(t, info.CreatedAt.Before(before.Truncate(time.Second)) || info.CreatedAt.After(time.Now()), "created %v, asked after %v", info.CreatedAt, before)
	hc := res.Container.HostConfig
	require.True(t, hc.ReadonlyRootfs)
	require.Equal(t, []string{"ALL"}, []string(hc.CapDrop))
	require.Contains(t, hc.SecurityOpt, "no-new-privileges")
	require.Equal(t, "none", string(hc.NetworkMode))
	require.EqualValues(t, 128<<20, hc.Memory)
	require.EqualValues(t, 128<<20, hc.MemorySwap, "no swap above the memory limit")
	require.EqualValues(t, 64, *hc.PidsLimit)
	require.EqualValues(t, 5e8, hc.NanoCPUs)
	require.True(t, *hc.Init)
	require.Equal(t, "1000:1000", res.Container.Config.User)
	for _, path := range []string{"/tmp", "/workspace"} {
		require.Contains(t, hc.Tmpfs[path], "uid=1000,gid=1000", "%s belongs to the sandbox user, whatever the image has there", path)
	}
	for path, size := range map[string]string{"/tmp": "size=16777216", "/workspace": "size=16777216", "/run/paddock": "size=65536"} {
		require.Contains(t, hc.Tmpfs[path], size, path)
		require.Contains(t, hc.Tmpfs[path], "nosuid,nodev", path)
	}
	require.Contains(t, hc.Tmpfs["/workspace"], "noexec", "an executable workspace is opt-in")
	require.Equal(t, "runc", hc.Runtime, "asked for explicitly here")
}

func TestBadLimitsAndUsersAreRefused(t *testing.T) {
	a := newAdapter(t)
	for _, params := range []map[string]string{
		{"disk_mb": "512", "memory_mb": "256"}, {"memory_mb": "0"}, {"cpus": "-1"}, {"max_processes": "x"},
		{"egress": "some"}, {"runtime": "kata"}, {"idle_timeout": "soon"}, {"privileged": "true"},
	} {
		_, err := a.Create(ctxFor(t, 10*time.Second), "refused", paddock.CreateOpts{Params: params})
		require.ErrorIs(t, err, paddock.ErrInvalid, "%v", params)
	}
	names, err := a.ListAllNames(ctxFor(t, 10*time.Second))
	require.NoError(t, err)
	require.NotContains(t, names, "refused", "nothing was made")
	_, err = a.Create(ctxFor(t, 10*time.Second), "no-image", paddock.CreateOpts{Params: map[string]string{"image": "paddock-test/none:0"}})
	require.ErrorIs(t, err, paddock.ErrInvalid)
	require.Contains(t, err.Error(), "not on the engine")
}

// Security against the real engine: outside scratch nothing is writable;
// the configured non-root uid runs; only lo exists; the limits hold and
// leave the sandbox (and the host) usable.
func TestContainment(t *testing.T) {
	t.Parallel()
	a := newAdapter(t, func(c *docker.Config) { c.User = "1234:1234" })
	h := sandbox(t, a, "contained", map[string]string{"memory_mb": "96", "disk_mb": "16", "max_processes": "48"})
	ctx := ctxFor(t, 2*time.Minute)

	t.Run("outside scratch is read-only", func(t *testing.T) {
		for _, path := range []string{"/etc/evil", "/bin/evil", "/evil", "/run/paddock/last-used"} {
			err := a.WriteFile(ctx, h, path, 0o644, strings.NewReader("x"))
			require.ErrorIs(t, err, paddock.ErrInvalid, path)
		}
		out, code := execOut(t, a, h, "sh", "-c", "echo x > /etc/passwd")
		require.NotEqual(t, 0, code)
		require.Contains(t, out, "Read-only file system")
		require.NoError(t, a.WriteFile(ctx, h, "/tmp/ok/a.txt", 0o600, strings.NewReader("fine")))
		require.NoError(t, a.WriteFile(ctx, h, "/workspace/b.txt", 0o644, strings.NewReader("fine")))
	})
	t.Run("runs as the configured uid", func(t *testing.T) {
		out, code := execOut(t, a, h, "id", "-u")
		require.Equal(t, 0, code)
		require.Equal(t, "1234\n", out)
		out, _ = execOut(t, a, h, "sh", "-c", "grep CapEff /proc/self/status")
		require.Contains(t, out, "0000000000000000", "no capabilities")
	})
	t.Run("only loopback", func(t *testing.T) {
		out, code := execOut(t, a, h, "ls", "/sys/class/net")
		require.Equal(t, 0, code)
		require.Equal(t, "lo\n", out)
		out, code = execOut(t, a, h, "sh", "-c", "nc -w 2 192.0.2.1 80 </dev/null; echo rc=$?")
		require.Contains(t, out, "rc=1", "no route out: %s", out)
		_ = code
	})
	t.Run("scratch beyond its size is ENOSPC", func(t *testing.T) {
		out, code := execOut(t, a, h, "dd", "if=/dev/zero", "of=/tmp/big", "bs=1048576", "count=64")
		require.NotEqual(t, 0, code)
		require.Contains(t, out, "No space left on device")
		err := a.WriteFile(ctx, h, "/workspace/big", 0o644, io.LimitReader(zeros{}, 32<<20))
		require.ErrorIs(t, err, paddock.ErrInvalid)
		require.Contains(t, err.Error(), "No space left on device")
		_, _ = execOut(t, a, h, "rm", "-f", "/tmp/big", "/workspace/big")
	})
	t.Run("memory beyond the limit is killed, the sandbox lives", func(t *testing.T) {
		// tail keeps the one endless "line" of /dev/zero in memory.
		_, code := execOut(t, a, h, "sh", "-c", "head -c 400000000 /dev/zero | tail -n 1 >/dev/null")
		require.Equal(t, 137, code, "killed by the OOM killer")
		out, code := execOut(t, a, h, "echo", "still here")
		require.Equal(t, 0, code)
		require.Equal(t, "still here\n", out)
	})
	t.Run("a fork bomb stops at the process limit", func(t *testing.T) {
		other := sandbox(t, a, "bystander", nil)
		st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", "b() { b & b & sleep 20; }; b"), paddock.SpawnOpts{})
		require.NoError(t, err)
		defer st.Close()
		cli, err := client.New(client.FromEnv)
		require.NoError(t, err)
		defer cli.Close()
		peak := uint64(0)
		for range 10 {
			stats, err := cli.ContainerStats(ctx, docker.ContainerName(h.Name), client.ContainerStatsOptions{Stream: false})
			require.NoError(t, err)
			var s struct {
				PidsStats struct{ Current uint64 } `json:"pids_stats"`
			}
			require.NoError(t, json.NewDecoder(stats.Body).Decode(&s))
			_ = stats.Body.Close()
			peak = max(peak, s.PidsStats.Current)
		}
		// The sandbox's own processes never pass the limit. A process the
		// adapter execs into the sandbox joins the cgroup by migration,
		// which pids.max does not refuse: one shell and, while it starts,
		// runc's init, for each exec in flight. A spawn's can overlap: its
		// activity stamp, a follower of its journal started again after an
		// engine hiccup, the read of its result (CI saw 52: two at once).
		// Without the limit the bomb doubles every step and is in the
		// hundreds within these samples; with it, at most those execs
		// stand above it.
		require.LessOrEqual(t, peak, uint64(48+3*2), "never above the limit, but for the adapter's own execs")
		require.Positive(t, peak)
		// The bomb ran into the limit: its forks were refused.
		var refused string
		for !strings.Contains(refused, "can't fork") {
			ev, err := st.Next(ctx)
			require.NoError(t, err, "the bomb's stderr so far: %q", refused)
			refused += string(ev.Data)
		}
		out, code := execOut(t, a, other, "echo", "unaffected")
		require.Equal(t, 0, code, "another sandbox keeps working")
		require.Equal(t, "unaffected\n", out)
		require.NoError(t, a.Destroy(ctx, h), "the bomb's sandbox can still be removed")
	})
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// Pausing while execs start never wedges the engine: Resume answers. Not
// parallel: beside six other tests at once its Resume found the engine
// wedged for minutes (pauses racing exiting execs on a saturated engine,
// which the adapter's exec gate does not cover).
func TestSuspendDuringExecs(t *testing.T) {
	a := newAdapter(t)
	h := sandbox(t, a, "busy", nil)
	for range 5 {
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				_, _ = a.Exec(ctx, h, paddock.NewCmd("true"), paddock.ExecOpts{})
			}()
		}
		require.NoError(t, a.Suspend(ctxFor(t, 2*time.Minute), h))
		_, err := a.Resume(ctxFor(t, 2*time.Minute), h)
		require.NoError(t, err, "a wedged engine would not answer")
		wg.Wait()
	}
	// The engine applies containerd's paused and resumed events from a
	// per-container queue, after its own pause and unpause calls have set
	// the state; when exec exits back that queue up, a stale paused event
	// can mark the resumed container paused until the resumed event
	// follows. So the status must settle on running, not read it at once.
	require.Eventually(t, func() bool {
		info, err := a.Get(ctxFor(t, 10*time.Second), h)
		return err == nil && info.Status == paddock.StatusRunning
	}, time.Minute, 20*time.Millisecond, "the sandbox runs again")
}

// ImageReady says whether the configured image is there, and how to get
// it when it is not.
func TestImageReady(t *testing.T) {
	require.NoError(t, newAdapter(t).ImageReady(ctxFor(t, 10*time.Second)))
	err := newAdapter(t, func(c *docker.Config) { c.Image = "paddock-test/none:0" }).ImageReady(ctxFor(t, 10*time.Second))
	require.ErrorIs(t, err, paddock.ErrInvalid)
	require.Contains(t, err.Error(), "paddock-test/none:0 is not on the engine")
}

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
		c.Runtime, c.MaxProcesses, c.Image, c.Helpers = docker.RuntimeRunsc, 1024, dockertest.DistroImage, false
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

// These need no engine.

func TestConfigIsValidatedUpFront(t *testing.T) {
	for _, cfg := range []docker.Config{
		{User: "0"}, {User: "0:0"}, {User: "root"}, {User: "0:1000"}, {User: "sandbox"}, {User: "1000:x"},
		{Runtime: "kata"}, {MemoryMB: 100, DiskMB: 200}, {CPUs: -1}, {PreviewKey: []byte("short")},
	} {
		_, err := docker.New(cfg)
		require.ErrorIs(t, err, paddock.ErrInvalid, "%+v", cfg)
	}
	a, err := docker.New(docker.Config{User: "1000:0"})
	require.NoError(t, err, "a non-root uid in group 0 is allowed")
	require.NoError(t, a.Close())
}

// Engine trouble is never absence: an unreachable engine is unavailable.
func TestUnreachableEngineIsNotAbsence(t *testing.T) {
	a, err := docker.New(docker.Config{Host: "unix:///nonexistent/paddock/docker.sock"})
	require.NoError(t, err)
	defer a.Close()
	ctx := ctxFor(t, 10*time.Second)
	_, err = a.Get(ctx, a.BuildHandle("any"))
	require.ErrorIs(t, err, paddock.ErrUnavailable)
	require.False(t, errors.Is(err, paddock.ErrNotFound))
	require.ErrorIs(t, a.Destroy(ctx, a.BuildHandle("any")), paddock.ErrUnavailable, "not a silent success")
	_, err = a.ListAllNames(ctx)
	require.ErrorIs(t, err, paddock.ErrUnavailable)
	require.ErrorIs(t, a.DestroyOnce(ctx, a.BuildHandle("any"), paddock.DestroyOnceOpts{}), paddock.ErrUnavailable)
	_, err = paddock.Reap(ctx, a, paddock.ReapOpts{})
	require.ErrorIs(t, err, paddock.ErrUnavailable)
	caps := a.Capabilities()
	require.True(t, caps.Has(paddock.CapExpose) && caps.Has(paddock.CapNamedSpawn) && caps.Has(paddock.CapForceTerminateSession))
	require.True(t, caps.Has(paddock.CapNetworkPolicy), "the default image carries the helpers")
	require.True(t, caps.Has(paddock.CapCheckpoint) && caps.Has(paddock.CapFork), "checkpoints are archives this adapter keeps")
	require.False(t, caps.Has(paddock.CapPublicURL))
	err = a.ApplyNetworkPolicy(ctx, a.BuildHandle("any"), paddock.NetworkPolicy{})
	require.ErrorIs(t, err, paddock.ErrUnavailable)
}
