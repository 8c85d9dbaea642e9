package daytona_test

import (
	"context"
	"os"
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
// processes, and the dropped command kills the subshell that was to
// record its exit code. Sessions are the detachable spawns.
func suiteConfig(a paddock.Adapter) conformance.Config {
	return conformance.Config{Adapter: a, Fixtures: conformance.WrappedShellFixtures(),
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
	cfg := suiteConfig(newAdapter(t, srv, slowMachine))
	cfg.Except = []string{conformance.LoadCase} // run through the runtime, which calls the adapter as the raw case does
	conformance.Run(t, cfg)
}

func TestConformanceThroughTheRuntime(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t, fastFollow())
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderDaytona: newAdapter(t, srv, slowMachine)}, Logger: testLogger()})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
	})
	conformance.RunRuntime(t, rt, paddock.ProviderDaytona, suiteConfig(nil))
}

// TestLive runs the conformance suite against the real Daytona with the
// key in DAYTONA_API_KEY. It creates and deletes sandboxes named
// paddock-live-<run>-<n>.
func TestLive(t *testing.T) {
	t.Parallel()
	conformance.RunLive(t, conformance.Live{
		Credential: "DAYTONA_API_KEY", Optional: []string{"DAYTONA_API_URL", "DAYTONA_SNAPSHOT"}, TurnsEnv: "DAYTONA_LOAD_TURNS", Turns: 5,
		Adapter: func(key string) (paddock.Adapter, error) {
			return daytona.New(daytona.Config{APIKey: paddock.NewSecret(captured.Secret(key)), APIURL: os.Getenv("DAYTONA_API_URL"),
				Snapshot: os.Getenv("DAYTONA_SNAPSHOT"), Logger: testLogger()})
		},
		SpawnOptions: paddock.SpawnOpts{Detachable: true},
		Configure: func(c *conformance.Config) {
			c.Fixtures.SpawnDrop = conformance.WrapperDrop() // a command that kills the subshell recording its code
		},
	})
}
