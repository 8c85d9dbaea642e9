package daemon_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/conformance"
	"github.com/paddockhq/paddock/daemon"
	"github.com/paddockhq/paddock/fake"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve starts a runtime over a and a daemon serving it on a loopback
// HTTP/2 (TLS) server, all stopped when the test ends, and returns a
// transport dialled to it.
func serve(t *testing.T, a paddock.Adapter) *daemon.Transport {
	t.Helper()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{a.Provider(): a}})
	require.NoError(t, err)
	hs := startServer(t, rt, daemon.Config{Transport: rt.Transport()})
	tr, err := daemon.Dial(hs.URL, daemon.DialOptions{HTTPClient: hs.Client()})
	require.NoError(t, err)
	return tr
}

// startServer serves a daemon of cfg over rt on a loopback HTTP/2 (TLS)
// server; both stop when the test ends.
func startServer(t *testing.T, rt *actors.Runtime, cfg daemon.Config) *httptest.Server {
	t.Helper()
	srv, err := daemon.New(cfg)
	require.NoError(t, err)
	hs := httptest.NewUnstartedServer(srv)
	hs.EnableHTTP2 = true
	hs.StartTLS()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
	})
	return hs
}

// The whole conformance suite passes through a daemon: every operation,
// stream and failure reaches the runtime behind it and comes back as the
// contract says.
func TestConformanceThroughTheDaemon(t *testing.T) {
	t.Parallel()
	a := fake.New()
	t.Cleanup(a.Reset)
	tr := serve(t, a)
	conformance.Run(t, conformance.Config{
		Adapter:  client.New(tr, paddock.ProviderFake),
		Fixtures: conformance.FakeFixtures(),
		PreviewProbe: func(_ context.Context, p paddock.Preview) (bool, error) {
			return a.PreviewValid(p), nil
		},
	})
}
