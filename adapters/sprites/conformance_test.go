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
	return conformance.Config{Adapter: a, Fixtures: fixtures(), FrameTimeout: 5 * time.Second, OperationTimeout: 2 * time.Minute}
}

// checkpointModes are the two settings the checkpoint cases run under.
var checkpointModes = map[string]func(*sprites.Config){
	"checkpoints off": func(*sprites.Config) {},
	"checkpoints on":  withCheckpoints,
}

// slowMachine gives calls two minutes: CI runs this suite's 500-turn load
// case beside the local and E2B ones on two cores, where one create took
// over 30 s (the default) while each took 2.4 s alone; the case is about
// lost bytes, not latency.
func slowMachine(c *sprites.Config) { c.Timeout = 2 * time.Minute }

func TestConformance(t *testing.T) {
	t.Parallel()
	for mode, edit := range checkpointModes {
		t.Run(mode, func(t *testing.T) {
			srv := newServer(t)
			conformance.Run(t, suiteConfig(newAdapter(t, srv, edit, slowMachine)))
		})
	}
}

func TestConformanceThroughTheRuntime(t *testing.T) {
	t.Parallel()
	for mode, edit := range checkpointModes {
		t.Run(mode, func(t *testing.T) {
			srv := newServer(t)
			a := newAdapter(t, srv, edit, slowMachine)
			rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderSprites: a}, Logger: testLogger()})
			require.NoError(t, err)
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				require.NoError(t, rt.Shutdown(ctx))
			})
			conformance.RunRuntime(t, rt, paddock.ProviderSprites, suiteConfig(nil))
		})
	}
}
