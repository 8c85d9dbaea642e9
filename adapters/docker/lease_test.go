package docker_test

import (
	"context"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/require"
)

func TestLeases(t *testing.T) {
	t.Parallel()
	conformance.RunLeases(t, conformance.LeaseSetup{
		Adapter: func(t *testing.T) paddock.Adapter { return newAdapter(t) },
		Foreign: func(t *testing.T, name string) func() bool {
			image := requireEngine(t)
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
