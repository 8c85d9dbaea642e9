package e2b_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/require"
)

// suiteConfig is the suite on shell fixtures: e2btest runs real processes,
// and the dropped command kills its journal's wrapper, so envd ends the
// stream with no exit the command made.
// The load case runs 200 turns (400 commands at once): each e2btest
// sandbox gets a mount namespace of its own, which a CI machine running
// the docker and local suites beside it makes slow.
func suiteConfig(a paddock.Adapter) conformance.Config {
	return conformance.Config{Adapter: a, Fixtures: conformance.WrappedShellFixtures(),
		SpawnOptions: paddock.SpawnOpts{Detachable: true}, // sessions are the detachable spawns
		Load:         conformance.Load{Turns: 200, Timeout: 5 * time.Minute}}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	cfg := suiteConfig(newAdapter(t, srv, slowMachine))
	cfg.Except = []string{conformance.LoadCase} // run through the runtime, which calls the adapter as the raw case does
	conformance.Run(t, cfg)
}

func TestConformanceThroughTheRuntime(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderE2B: newAdapter(t, srv, slowMachine)}, Logger: testLogger()})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
	})
	conformance.RunRuntime(t, rt, paddock.ProviderE2B, suiteConfig(nil))
}

// slowMachine gives ordinary calls two minutes: under load a loaded CI
// machine answers slowly, and a timeout there is not what the suite tests.
func slowMachine(c *e2b.Config) { c.Timeout = 2 * time.Minute }

// TestLive runs the conformance suite against the real E2B service with
// the key in E2B_API_KEY. It creates and kills sandboxes named
// paddock-live-<run>-<n>.
func TestLive(t *testing.T) {
	t.Parallel()
	conformance.RunLive(t, conformance.Live{
		Credential: "E2B_API_KEY", Optional: []string{"E2B_BASE_URL", "E2B_TEMPLATE", "E2B_USER"}, TurnsEnv: "E2B_LOAD_TURNS", Turns: 5,
		Adapter: func(key string) (paddock.Adapter, error) {
			return e2b.New(e2b.Config{APIKey: paddock.NewSecret(captured.Secret(key)), BaseURL: os.Getenv("E2B_BASE_URL"),
				Template: os.Getenv("E2B_TEMPLATE"), User: os.Getenv("E2B_USER"), Logger: testLogger()})
		},
		SpawnOptions: paddock.SpawnOpts{Detachable: true},
		Configure: func(c *conformance.Config) {
			c.Fixtures.SpawnDrop = conformance.WrapperDrop() // a command that kills its journal's wrapper
		},
	})
}
