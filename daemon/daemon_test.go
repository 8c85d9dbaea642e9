package daemon_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/conformance"
	"github.com/paddockhq/paddock/daemon"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/internal/perf"
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
	return startHandler(t, rt, srv)
}

// startHandler serves h on a loopback HTTP/2 (TLS) server configured as
// paddockd's; it and rt stop when the test ends.
func startHandler(t *testing.T, rt *actors.Runtime, h http.Handler) *httptest.Server {
	t.Helper()
	hs := httptest.NewUnstartedServer(h)
	hs.EnableHTTP2 = true
	hs.Config.HTTP2 = daemon.HTTP2Config() // as paddockd's
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

// The whole conformance suite passes for a tenant too: its names are
// prefixed at the provider, and every answer speaks its own.
func TestConformanceAsATenant(t *testing.T) {
	t.Parallel()
	a := fake.New()
	t.Cleanup(a.Reset)
	hs := serveGuarded(t, a, daemon.Token{Tenant: "acme", Secret: paddock.NewSecret("acme-token")})
	tr, err := daemon.Dial(hs.URL, daemon.DialOptions{HTTPClient: hs.Client(), Token: paddock.NewSecret("acme-token")})
	require.NoError(t, err)
	runConformance(t, a, tr)
}

// serveGuarded serves a daemon over a runtime of a behind tokens (as
// serve does, without the client).
func serveGuarded(t *testing.T, a paddock.Adapter, tokens ...daemon.Token) *httptest.Server {
	t.Helper()
	return serveGuardedWith(t, a, func(h http.Handler) http.Handler { return h }, tokens...)
}

// serveGuardedWith is serveGuarded with wrap around the guard.
func serveGuardedWith(t *testing.T, a paddock.Adapter, wrap func(http.Handler) http.Handler, tokens ...daemon.Token) *httptest.Server {
	t.Helper()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{a.Provider(): a}})
	require.NoError(t, err)
	srv, err := daemon.New(daemon.Config{Transport: rt.Transport()})
	require.NoError(t, err)
	guarded, err := daemon.RequireTokens(tokens, srv)
	require.NoError(t, err)
	return startHandler(t, rt, wrap(guarded))
}

// runConformance runs the whole suite on the fake a through tr.
func runConformance(t *testing.T, a *fake.Adapter, tr *daemon.Transport) {
	conformance.Run(t, conformance.Config{
		Adapter:  client.New(tr, paddock.ProviderFake),
		Fixtures: conformance.FakeFixtures(),
		PreviewProbe: func(_ context.Context, p paddock.Preview) (bool, error) {
			return a.PreviewValid(p), nil
		},
	})
}

// The whole conformance suite passes through a daemon: every operation,
// stream and failure reaches the runtime behind it and comes back as the
// contract says.
func TestConformanceThroughTheDaemon(t *testing.T) {
	t.Parallel()
	a := fake.New()
	t.Cleanup(a.Reset)
	runConformance(t, a, serve(t, a))
}

// A client that reads nothing holds its command back: the command is read
// only as far as the runtime's window, the server's stream, HTTP/2's
// window and the client's own buffer hold (64 + 66 + 1 + 128 + 64 frames
// of 32 KiB, about 330; the bound allows for HTTP/2's framing), never on
// toward the 65,536 it offers; then what the client reads arrives in
// order. (With compression on, HTTP/2's window bounded compressed bytes:
// this output compresses a thousandfold, and the command ran on.)
func TestAClientThatReadsNothingHoldsItsCommandBack(t *testing.T) {
	// Not parallel: it measures the process's heap, which other tests
	// would share (parallel ones wait until it ended).
	const chunks, size, bound = 1 << 16, 32 << 10, 512
	hose := perf.NewHose(chunks, size)
	tr := serve(t, hose)
	a := client.New(tr, paddock.ProviderFake)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	h, err := a.Create(ctx, "hose", paddock.CreateOpts{})
	require.NoError(t, err)
	heapBefore := heapInUse()
	st, err := a.Spawn(ctx, h, paddock.NewCmd("firehose"), paddock.SpawnOpts{})
	require.NoError(t, err)
	defer st.Close()
	// Reading nothing for a while: the count must never pass the bound,
	// however fast or slow the machine fills the buffers.
	watch := time.NewTicker(10 * time.Millisecond)
	defer watch.Stop()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); <-watch.C {
		require.LessOrEqual(t, hose.Read(), int64(bound), "the command is held back")
	}
	// The heap of this process (server, runtime and client) holds what the
	// windows hold, not the 2 GiB offered: the bound's chunks, and as much
	// again for the buffers' slack.
	grown := int64(heapInUse()) - int64(heapBefore)
	t.Logf("read %d of %d chunks with nothing read by the client; heap grew %d MiB", hose.Read(), chunks, grown>>20)
	require.Less(t, grown, int64(2*bound*size), "the heap stays within the windows")
	for i := range 256 {
		ev, err := st.Next(ctx)
		require.NoError(t, err)
		require.Equal(t, perf.HoseChunk(i, size), ev.Data, "chunk %d in order", i)
	}
}

// heapInUse is the heap's bytes in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
