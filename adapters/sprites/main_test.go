package sprites_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/adapters/internal/secretscan"
	"github.com/paddockhq/paddock/adapters/sprites"
	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
)

// captured holds every log line of every adapter the tests build, and the
// text of every error they inspect, so TestMain can prove that no token
// reached any of them.
var captured = secretscan.New()

// testLogger logs everything, at debug level, into the capture.
func testLogger() zerolog.Logger { return captured.Logger() }

func TestMain(m *testing.M) { captured.Main(m, "token") }

// build is sprites.New, failing the test on an error.
func build(t testing.TB, cfg sprites.Config) *sprites.Adapter {
	return adaptertest.New(t, sprites.New, cfg)
}

// newServer starts a loopback Sprites whose token is registered with the
// leak scan. The exit hold is production's unless an option changes it.
func newServer(t testing.TB, opts ...spritestest.Option) *spritestest.Server {
	t.Helper()
	srv := spritestest.NewServer(t, opts...)
	captured.Secret(srv.Token())
	return srv
}

// newAdapter returns an adapter for srv, logging into the capture; edit
// adjusts the configuration.
func newAdapter(t testing.TB, srv *spritestest.Server, edit ...func(*sprites.Config)) *sprites.Adapter {
	t.Helper()
	cfg := sprites.Config{Token: paddock.NewSecret(srv.Token()), BaseURL: srv.URL(), Logger: testLogger()}
	for _, e := range edit {
		e(&cfg)
	}
	return build(t, cfg)
}

// withCheckpoints turns checkpoint creation on.
func withCheckpoints(c *sprites.Config) { c.CheckpointCreation = true }

// ctxFor bounds a call the test expects to end on its own: it catches a
// hang, never decides an outcome (a test of a deadline sets the option's
// timeout). The bound is at least 30 s because CI's loaded machine once took
// over 5 s for a loopback DELETE and GET.
func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), max(d, 30*time.Second))
	t.Cleanup(cancel)
	return ctx
}

// requireKind asserts err is of the taxonomy kind of want, and records it
// for the leak scan.
func requireKind(t testing.TB, err, want error, msgAndArgs ...any) {
	t.Helper()
	captured.Err(err)
	require.Error(t, err, msgAndArgs...)
	require.True(t, errors.Is(err, want), "want %v, got %T %v", want, err, err)
}

// requireDetail asserts err is unavailable with exactly detail.
func requireDetail(t testing.TB, err error, detail string, msgAndArgs ...any) {
	t.Helper()
	captured.Err(err)
	var u *paddock.UnavailableError
	require.ErrorAs(t, err, &u, msgAndArgs...)
	require.Equal(t, detail, u.Detail, msgAndArgs...)
}

// create makes a sprite through the adapter.
func create(t testing.TB, a *sprites.Adapter, name string) paddock.Handle {
	t.Helper()
	h, err := a.Create(ctxFor(t, 10*time.Second), name, paddock.CreateOpts{})
	require.NoError(t, err)
	return h
}

// onBox is a loopback Sprites, an adapter on it and a sprite "box" there.
func onBox(t testing.TB) (*spritestest.Server, *sprites.Adapter, paddock.Handle) {
	t.Helper()
	srv := newServer(t)
	a := newAdapter(t, srv)
	return srv, a, create(t, a, "box")
}

// drain reads st until its terminal event.
func drain(t testing.TB, st paddock.Stream) (stdout, stderr string, last paddock.Event) {
	t.Helper()
	stdout, stderr, last = adaptertest.Drain(t, st, 2*time.Minute)
	captured.Err(last.Err)
	return stdout, stderr, last
}
