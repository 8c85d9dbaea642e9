// Package localtest runs the local adapter in tests, yours too, the way
// httptest runs a server: an adapter on a temporary root, closed when the
// test ends, with its preview proxy served on loopback; the sandbox init
// built once per test binary; and the isolation modes this host offers.
package localtest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/adapters/local"
	"github.com/stretchr/testify/require"
)

// New returns an adapter for cfg, on a fresh temporary root when cfg
// names none, with its preview proxy served on a loopback server that
// cfg.PreviewBaseURL points at (unless cfg sets its own). It is closed,
// and the server stopped, when t ends.
func New(t testing.TB, cfg local.Config) *local.Adapter {
	t.Helper()
	if cfg.Root == "" {
		cfg.Root = t.TempDir()
	}
	var mux *http.ServeMux
	if cfg.PreviewBaseURL == "" {
		mux = http.NewServeMux()
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		cfg.PreviewBaseURL = srv.URL
	}
	a, err := local.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Close()) })
	if mux != nil {
		mux.Handle("/preview/", a.Previews())
	}
	return a
}

// Modes are the isolation modes this host runs, by name: unisolated
// always, namespaces where the host allows them.
func Modes(t testing.TB) map[string]local.Isolation {
	t.Helper()
	modes := map[string]local.Isolation{"unisolated": local.IsolationNone}
	probe, err := local.New(local.Config{Root: t.TempDir()})
	require.NoError(t, err)
	defer probe.Close()
	if ok, why := probe.Isolated(); ok {
		modes["namespaces"] = local.IsolationNamespaces
	} else {
		t.Logf("namespace isolation is unavailable here (%s); only the unisolated mode runs", why)
	}
	return modes
}

// built is cmd/paddock-init built once for the test binary, in a directory
// Cleanup removes. It is built without the race detector: a load test
// starts hundreds of sandboxes, and every init re-executed from a test
// binary built with -race starts the detector's runtime, which costs four
// times what the rest of the plain program's start does.
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

// InitProgram is the path of cmd/paddock-init, built with the go command
// on first use, for local.Config.InitProgram.
func InitProgram(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "paddock-init-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "paddock-init")
		out, err := exec.Command("go", "build", "-o", built.path, "github.com/paddockhq/paddock/cmd/paddock-init").CombinedOutput()
		if err != nil {
			built.err = &buildError{err: err, out: string(out)}
		}
	})
	require.NoError(t, built.err, "building cmd/paddock-init")
	return built.path
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// Cleanup removes what InitProgram built; call it from TestMain after the
// tests ran.
func Cleanup() {
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
}
