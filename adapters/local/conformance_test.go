//go:build unix

package local_test

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/adapters/local/localtest"
	"github.com/paddockhq/paddock/conformance"
)

// newLocal returns an adapter over a fresh root, closed when the test ends.
func newLocal(t testing.TB, opts ...option) *local.Adapter {
	t.Helper()
	return localtest.New(t, config(opts...))
}

// shellConfig is the suite on shell fixtures.
func shellConfig() conformance.Config {
	return conformance.Config{Fixtures: conformance.ShellFixtures(),
		PreviewProbe: conformance.ProbePreviewHTTP}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			cfg := shellConfig()
			cfg.Adapter = newPreviewLocal(t, opt)
			cfg.Except = []string{conformance.LoadCase} // run through the runtime, which calls the adapter as the raw case does
			conformance.Run(t, cfg)
		})
	}
}

func TestConformanceThroughTheRuntime(t *testing.T) {
	t.Parallel()
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			rt := startRuntime(t, newPreviewLocal(t, opt))
			conformance.RunRuntime(t, rt, paddock.ProviderLocal, shellConfig())
		})
	}
}

// newPreviewLocal returns an adapter whose preview proxy is served on a
// loopback server, with the init program built for the tests (the load
// case starts 500 sandboxes). The suite's load case starves every reader
// on a 2-core machine: a drain past the default 5 s limit there is load,
// not a leftover holder (those are tested on their own, with the default).
func newPreviewLocal(t testing.TB, opts ...option) *local.Adapter {
	return newLocal(t, append([]option{withDrainLimit(30 * time.Second), withInitProgram(localtest.InitProgram(t))}, opts...)...)
}
