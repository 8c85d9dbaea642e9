package docker_test

import (
	"context"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/docker/dockertest"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
