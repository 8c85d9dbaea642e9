//go:build unix

package local_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/require"
)

// newLocal returns an adapter over a fresh root, closed when the test ends.
func newLocal(t testing.TB, opts ...option) *local.Adapter {
	t.Helper()
	a, err := local.New(config(append([]option{withRoot(t.TempDir())}, opts...)...))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Close()) })
	return a
}

// isolationModes are the modes every conformance run covers.
func isolationModes(t *testing.T) map[string]option {
	modes := map[string]option{"unisolated": withIsolation(local.IsolationNone)}
	probe, err := local.New(config(withRoot(t.TempDir())))
	require.NoError(t, err)
	if ok, why := probe.Isolated(); ok {
		modes["namespaces"] = withIsolation(local.IsolationNamespaces)
	} else {
		t.Logf("namespace isolation is unavailable here (%s); only the unisolated mode runs", why)
	}
	require.NoError(t, probe.Close())
	return modes
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
// loopback server (the preview base URL points at it), with the init
// program built for the tests (the load case starts 500 sandboxes).
func newPreviewLocal(t testing.TB, opts ...option) *local.Adapter {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	// The suite's load case starves every reader on a 2-core machine: a
	// drain past the default 5 s limit there is load, not a leftover
	// holder (those are tested on their own, with the default).
	a := newLocal(t, append([]option{withPreviewBaseURL(srv.URL), withDrainLimit(30 * time.Second),
		withInitProgram(initProgram(t))}, opts...)...)
	mux.Handle("/preview/", a.Previews())
	return a
}
