package docker_test

import (
	"errors"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/stretchr/testify/require"
)

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
	require.False(t, caps.Has(paddock.CapNetworkPolicy) || caps.Has(paddock.CapCheckpoint) || caps.Has(paddock.CapPublicURL))
}
