package e2b_test

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/require"
)

// suiteConfig is the suite on shell fixtures: e2btest runs real processes.
func suiteConfig(a paddock.Adapter) conformance.Config {
	return conformance.Config{Adapter: a, Fixtures: conformance.ShellFixtures(), FrameTimeout: 5 * time.Second}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	conformance.Run(t, suiteConfig(newAdapter(t, srv)))
}

func TestConformanceThroughTheRuntime(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderE2B: newAdapter(t, srv)}})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
	})
	conformance.RunRuntime(t, rt, paddock.ProviderE2B, suiteConfig(nil))
}
