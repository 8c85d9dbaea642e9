package docker_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/paddockhq/paddock/adapters/docker/dockertest"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// crashedOwner runs a helper process that creates sandbox name, then
// kills it: the sandbox's owner runtime is gone.
func crashedOwner(t *testing.T, name string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1", "HELPER_SANDBOX="+name, dockertest.ImageEnv+"="+dockertest.Image(t))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, _ := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.Equal(t, "ready\n", line, "the helper created its sandbox")
}

func has(list []string, name string) bool {
	for _, n := range list {
		if n == name {
			return true
		}
	}
	return false
}

// The reap tests are not parallel: a reap destroys every orphan on the
// engine, the sandboxes of TestLeases' killed owners too, which that test
// must see its own reaper destroy.

// Reap with second-scale limits: an idle sandbox is stopped, an old one
// destroyed, an orphan reaped, an active one (and an adopted orphan) kept.
// The active one's idle bound (10 s) is passed since its creation but not
// since its last exec, however slowly a loaded machine runs those.
func TestReap(t *testing.T) {
	a := newAdapter(t)
	ctx := ctxFor(t, 5*time.Minute)
	idle := sandbox(t, a, "reap-idle", map[string]string{"idle_timeout": "1s", "max_age": "-1s"})
	const activeIdle = 10 * time.Second
	active := sandbox(t, a, "reap-active", map[string]string{"idle_timeout": activeIdle.String(), "max_age": "-1s"})
	activeSince := time.Now()
	old, err := a.Create(ctx, "reap-old", paddock.CreateOpts{Params: map[string]string{"max_age": "1s", "idle_timeout": "-1s"}})
	require.NoError(t, err)
	crashedOwner(t, "reap-orphan")
	crashedOwner(t, "reap-adopted")
	adopted := sandbox(t, a, "reap-adopted", nil) // Create adopts it: this runtime owns it now

	for time.Since(activeSince) <= activeIdle+time.Second { // each exec stamps it (at most once a second)
		_, code := execOut(t, a, active, "true")
		require.Equal(t, 0, code)
		time.Sleep(300 * time.Millisecond)
	}
	report, err := paddock.Reap(ctx, a, paddock.ReapOpts{})
	require.NoError(t, err)
	t.Logf("reaped: %+v", report)
	require.True(t, has(report.Stopped, idle.Name), "idle expiry stops")
	require.True(t, has(report.Destroyed, old.Name), "max age destroys")
	require.True(t, has(report.Orphaned, "reap-orphan"), "the crashed runtime's sandbox is an orphan")
	for _, kept := range []string{active.Name, adopted.Name} {
		require.False(t, has(report.Stopped, kept) || has(report.Destroyed, kept) || has(report.Orphaned, kept), kept)
	}

	info, err := a.Get(ctx, idle)
	require.NoError(t, err)
	require.Equal(t, paddock.StatusSuspended, info.Status)
	_, err = a.Get(ctx, old)
	require.ErrorIs(t, err, paddock.ErrNotFound)
	_, err = a.Get(ctx, a.BuildHandle("reap-orphan"))
	require.ErrorIs(t, err, paddock.ErrNotFound)
	info, err = a.Get(ctx, active)
	require.NoError(t, err)
	require.Equal(t, paddock.StatusRunning, info.Status)

	// A stopped sandbox comes back through Create (or Resume).
	_, err = a.Create(ctx, idle.Name, paddock.CreateOpts{})
	require.NoError(t, err)
	out, code := execOut(t, a, idle, "echo", "back")
	require.Equal(t, 0, code)
	require.Equal(t, "back\n", out)

	// The stamp cannot be forged from inside.
	out, code = execOut(t, a, active, "sh", "-c", "echo 99999999999999999 > /run/paddock/last-used")
	require.NotEqual(t, 0, code, out)
	require.Contains(t, out, "ermission denied")
}

// The runtime runs the reaper on its schedule.
func TestRuntimeReapsOnSchedule(t *testing.T) {
	a := newAdapter(t)
	h := sandbox(t, a, "scheduled-idle", map[string]string{"idle_timeout": "1s", "max_age": "-1s"})
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderDocker: a}, ReapInterval: 500 * time.Millisecond})
	require.NoError(t, err)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
	}()
	require.Eventually(t, func() bool {
		info, err := a.Get(context.Background(), h)
		return err == nil && info.Status == paddock.StatusSuspended
	}, 30*time.Second, 200*time.Millisecond, "stopped by the scheduled reaper")
	reports, err := rt.Reap(ctxFor(t, time.Minute), paddock.ReapOpts{})
	require.NoError(t, err)
	require.Contains(t, reports, paddock.ProviderDocker)
}

func TestReapLeavesOthersAlone(t *testing.T) {
	a := newAdapter(t, func(c *docker.Config) { c.Owner = "elsewhere/1/1" })
	h := sandbox(t, a, "foreign-owner", map[string]string{"idle_timeout": "-1s", "max_age": "-1s"})
	report, err := paddock.Reap(ctxFor(t, time.Minute), a, paddock.ReapOpts{})
	require.NoError(t, err)
	require.False(t, has(report.Orphaned, h.Name), "an owner on another host cannot be judged")
	require.False(t, strings.Contains(strings.Join(report.Destroyed, ","), h.Name))
}

func TestLeases(t *testing.T) {
	t.Parallel()
	conformance.RunLeases(t, conformance.LeaseSetup{
		Adapter: func(t *testing.T) paddock.Adapter { return newAdapter(t) },
		Foreign: func(t *testing.T, name string) func() bool {
			image := dockertest.Image(t)
			cli, err := client.New(client.FromEnv)
			require.NoError(t, err)
			t.Cleanup(func() { _ = cli.Close() })
			ctx := ctxFor(t, time.Minute)
			res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: name,
				Config:     &container.Config{Image: image, Entrypoint: []string{"/bin/sh", "-c", "sleep 3600"}},
				HostConfig: &container.HostConfig{NetworkMode: "none"}})
			require.NoError(t, err)
			t.Cleanup(func() {
				_, _ = cli.ContainerRemove(context.Background(), res.ID, client.ContainerRemoveOptions{Force: true})
			})
			_, err = cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{})
			require.NoError(t, err)
			return func() bool {
				got, err := cli.ContainerInspect(context.Background(), res.ID, client.ContainerInspectOptions{})
				return err == nil && got.Container.State.Running
			}
		},
	})
}

// A stopped sandbox loses its renewals with its memory, so a lapsed lease
// in its labels does not make it an orphan; running, it does.
func TestReapSparesAStoppedSandboxByLease(t *testing.T) {
	t.Parallel()
	a := newAdapter(t)
	ctx := ctxFor(t, 3*time.Minute)
	lapsed := paddock.Lease{Owner: "gone-elsewhere", Until: time.Now().Add(-time.Minute)}
	params := map[string]string{"idle_timeout": "-1s", "max_age": "-1s"}
	stopped, err := a.Create(ctx, "lease-stopped", paddock.CreateOpts{Params: params, Lease: lapsed})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Destroy(context.Background(), stopped) })
	running, err := a.Create(ctx, "lease-running", paddock.CreateOpts{Params: params, Lease: lapsed})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Destroy(context.Background(), running) })
	require.NoError(t, a.Suspend(ctx, stopped))

	report, err := paddock.Reap(ctx, a, paddock.ReapOpts{DryRun: true})
	require.NoError(t, err)
	assert.Contains(t, report.Orphaned, running.Name, "a running sandbox whose lease lapsed is an orphan")
	assert.NotContains(t, report.Orphaned, stopped.Name, "a suspended one keeps no renewals: never an orphan by lease")
}
