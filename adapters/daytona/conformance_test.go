package daytona_test

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/daytona"
	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/require"
)

// suiteConfig is the suite on shell fixtures: daytonatest runs real
// processes. Sessions are the detachable spawns.
func suiteConfig(a paddock.Adapter) conformance.Config {
	return conformance.Config{Adapter: a, Fixtures: conformance.ShellFixtures(), FrameTimeout: 20 * time.Second,
		SpawnOptions: paddock.SpawnOpts{Detachable: true},
		Load:         conformance.Load{Turns: 100, Timeout: 5 * time.Minute}}
}

// fastFollow ends a follow 100 ms after the command (the daemon waits a
// second).
func fastFollow() daytonatest.Option { return daytonatest.WithFollowIdle(5) }

// slowMachine gives ordinary calls two minutes: a loaded CI machine
// answers slowly, and a timeout there is not what the suite tests.
func slowMachine(c *daytona.Config) { c.Timeout = 2 * time.Minute; c.StartTimeout = 2 * time.Minute }

func TestConformance(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t, fastFollow())
	conformance.Run(t, suiteConfig(newAdapter(t, srv, slowMachine)))
}

func TestConformanceThroughTheRuntime(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t, fastFollow())
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderDaytona: newAdapter(t, srv, slowMachine)}, Logger: testLogger()})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
	})
	conformance.RunRuntime(t, rt, paddock.ProviderDaytona, suiteConfig(nil))
}
