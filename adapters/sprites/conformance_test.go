package sprites_test

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/sprites"
	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/require"
)

// fixtures are the shell fixtures (spritestest runs real processes) plus
// the server's scripted dropped connection.
func fixtures() conformance.Fixtures {
	f := conformance.ShellFixtures()
	drop := paddock.NewCmd(spritestest.DropCommand, "partial")
	f.SpawnDrop = &drop
	return f
}

func suiteConfig(a paddock.Adapter) conformance.Config {
	return conformance.Config{Adapter: a, Fixtures: fixtures()}
}

// checkpointModes are the two settings the checkpoint cases run under:
// the whole suite with checkpoints on, and with them off only the cases
// whose promise that changes (the rest would repeat the first run).
var checkpointModes = map[string]struct {
	edit  func(*sprites.Config)
	cases []string
}{
	"checkpoints on":  {edit: withCheckpoints},
	"checkpoints off": {edit: func(*sprites.Config) {}, cases: []string{"20", "26"}},
}

// slowMachine gives calls two minutes: CI runs this suite's 500-turn load
// case beside the local and E2B ones on two cores, where one create took
// over 30 s (the default) while each took 2.4 s alone; the case is about
// lost bytes, not latency.
func slowMachine(c *sprites.Config) { c.Timeout = 2 * time.Minute }

func TestConformance(t *testing.T) {
	t.Parallel()
	for name, mode := range checkpointModes {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t)
			cfg := suiteConfig(newAdapter(t, srv, mode.edit, slowMachine))
			cfg.Cases, cfg.Except = mode.cases, []string{conformance.LoadCase} // run through the runtime, which calls the adapter as the raw case does
			conformance.Run(t, cfg)
		})
	}
}

func TestConformanceThroughTheRuntime(t *testing.T) {
	t.Parallel()
	for name, mode := range checkpointModes {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t)
			a := newAdapter(t, srv, mode.edit, slowMachine)
			rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderSprites: a}, Logger: testLogger()})
			require.NoError(t, err)
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				require.NoError(t, rt.Shutdown(ctx))
			})
			cfg := suiteConfig(nil)
			cfg.Cases = mode.cases
			conformance.RunRuntime(t, rt, paddock.ProviderSprites, cfg)
		})
	}
}
