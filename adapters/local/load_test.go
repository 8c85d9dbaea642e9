package local_test

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/require"
)

// stressTurns is the scale at which, on a 2-core machine, output was lost
// when a timer decided that a command's output was complete.
const stressTurns = 500

// TestStress runs 500 agent turns at once (create, Exec `seq 1 3000`,
// Spawn `seq 1 20000`, read everything, destroy), through the adapter
// alone unisolated and through the runtime isolated, and requires every
// byte and exactly one terminal event in every turn.
func TestStress(t *testing.T) {
	t.Parallel()
	modes := isolationModes(t)
	paths := map[string]struct {
		opt     local.Option
		runtime bool
	}{"adapter, unisolated": {opt: modes["unisolated"]}}
	if opt, ok := modes["namespaces"]; ok {
		paths["runtime, namespaces"] = struct {
			opt     local.Option
			runtime bool
		}{opt: opt, runtime: true}
	} else {
		paths["runtime, unisolated"] = struct {
			opt     local.Option
			runtime bool
		}{opt: modes["unisolated"], runtime: true}
	}
	for name, p := range paths {
		t.Run(name, func(t *testing.T) {
			var a paddock.Adapter = newLocal(t, p.opt)
			if p.runtime {
				a = startRuntime(t, a).View(paddock.ProviderLocal)
			}
			c, cancel := context.WithTimeout(ctx, 4*time.Minute)
			defer cancel()
			report := conformance.RunLoad(c, a, conformance.ShellFixtures(), paddock.SpawnOpts{}, stressTurns, nil)
			t.Logf("%s", report)
			require.Zero(t, report.Failed, "%s", report)
			require.Empty(t, report.LeftBehind)
		})
	}
}

// startRuntime runs a runtime over a, shut down when the test ends.
func startRuntime(t testing.TB, a paddock.Adapter) *actors.Runtime {
	t.Helper()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{a.Provider(): a}})
	require.NoError(t, err)
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		require.NoError(t, rt.Shutdown(c))
	})
	return rt
}
