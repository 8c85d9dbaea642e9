package docker_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/paddockhq/paddock/adapters/docker/dockertest"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/require"
)

// fixtures are the shell fixtures plus a dropped transport: the command
// kills its session's runner (its parent), so no exit is ever recorded.
func fixtures() conformance.Fixtures {
	f := conformance.ShellFixtures()
	f.SpawnDrop = conformance.WrapperDrop()
	return f
}

// loadTurns is the load case's concurrency here: each turn is a container
// of its own, and a 2-core machine runs a few dozen at once.
const loadTurns = 40

func suiteConfig(a paddock.Adapter) conformance.Config {
	return conformance.Config{Adapter: a, Fixtures: fixtures(),
		PreviewProbe: conformance.ProbePreviewHTTP, Load: conformance.Load{Turns: loadTurns}}
}

// newPreviewAdapter returns an adapter whose preview proxy is served on a
// loopback server (PreviewBaseURL points at it).
func newPreviewAdapter(t testing.TB, edit ...func(*docker.Config)) *docker.Adapter {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	a := newAdapter(t, append([]func(*docker.Config){func(c *docker.Config) {
		c.PreviewBaseURL = srv.URL
		c.PreviewKey = []byte("a test key that is long enough to sign previews")
	}}, edit...)...)
	mux.Handle("/preview/", a.Previews())
	return a
}

func TestConformance(t *testing.T) {
	t.Parallel()
	a := newPreviewAdapter(t)
	cfg := suiteConfig(a)
	cfg.Except = []string{conformance.LoadCase} // run through the runtime, which calls the adapter as the raw case does
	conformance.Run(t, cfg)
}

// An ordinary image passes too: one shaped like a distro's, whose
// /tmp, /workspace (root's, 0755, holding a project file), /home, /var
// and non-root user the scratch mounts and the sandbox user must live
// with. It has no paddock-watch, so it is proven without watch.
func TestConformanceOnADistroShapedImage(t *testing.T) {
	t.Parallel()
	a := newPreviewAdapter(t, func(c *docker.Config) { c.Image = dockertest.DistroImage; c.Watch = false })
	cfg := suiteConfig(a)
	cfg.Except = []string{conformance.LoadCase} // the image changes nothing of it
	conformance.Run(t, cfg)
}

func TestConformanceThroughTheRuntime(t *testing.T) {
	t.Parallel()
	a := newPreviewAdapter(t)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderDocker: a}, ReapInterval: -1})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
	})
	conformance.RunRuntime(t, rt, paddock.ProviderDocker, suiteConfig(nil))
}
