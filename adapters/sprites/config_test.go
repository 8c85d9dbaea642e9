package sprites_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/sprites"
	"github.com/stretchr/testify/require"
)

// The token is only ever in request headers: no printed form of the
// configuration or the adapter shows it, nor does any error.
func TestTheTokenNeverShows(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	cfg := sprites.Config{Token: paddock.NewSecret(srv.Token()), BaseURL: srv.URL(), Logger: testLogger()}
	a := build(t, cfg)
	js, err := json.Marshal(cfg)
	require.NoError(t, err)
	for _, s := range []string{fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), string(js),
		fmt.Sprintf("%v", a), fmt.Sprintf("%+v", a), fmt.Sprintf("%#v", a)} {
		require.NotContains(t, s, srv.Token())
	}
	// Errors from every layer: HTTP, WebSocket, bounded, transport.
	ctx := ctxFor(t, 10*time.Second)
	_, err = a.Get(ctx, a.BuildHandle("absent"))
	captured.Err(err)
	_, err = a.Spawn(ctx, a.BuildHandle("absent"), paddock.NewCmd("true"), paddock.SpawnOpts{})
	captured.Err(err)
	_, err = a.CreateNew(ctx, "x", paddock.CreateNewOpts{})
	captured.Err(err)
	dead := build(t, sprites.Config{Token: paddock.NewSecret(srv.Token()), BaseURL: "http://127.0.0.1:1", Logger: testLogger()})
	_, err = dead.Get(ctx, dead.BuildHandle("x"))
	requireKind(t, err, paddock.ErrUnavailable)
	_, err = dead.Exec(ctx, dead.BuildHandle("x"), paddock.NewCmd("true"), paddock.ExecOpts{})
	requireKind(t, err, paddock.ErrUnavailable)
	require.Zero(t, captured.Leaks(), "so far, no token in any log line or error")
	require.Positive(t, captured.Lines(), "the adapters did log")
}

// Unset fields take their defaults; a missing token is a denied error at
// first use, never a panic, and sends nothing.
func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	a := build(t, sprites.Config{})
	require.Equal(t, paddock.ProviderSprites, a.Provider())
	caps := a.Capabilities()
	for _, c := range []paddock.Capability{paddock.CapSuspend, paddock.CapNetworkPolicy, paddock.CapAttach, paddock.CapTTY,
		paddock.CapPublicURL, paddock.CapTerminateSession, paddock.CapForceTerminateSession, paddock.CapCreateNew, paddock.CapDestroyOnce} {
		require.True(t, caps.Has(c), c)
	}
	require.False(t, caps.Has(paddock.CapCheckpoint), "checkpoint creation is off by default")
	require.False(t, caps.Has(paddock.CapNamedSpawn))
	require.False(t, caps.Has(paddock.CapExpose))
	_, err := a.Get(ctxFor(t, time.Second), a.BuildHandle("x"))
	requireKind(t, err, paddock.ErrDenied)
	_, err = a.Spawn(ctxFor(t, time.Second), a.BuildHandle("x"), paddock.NewCmd("true"), paddock.SpawnOpts{})
	requireKind(t, err, paddock.ErrDenied)
	_, err = a.Spawn(ctxFor(t, time.Second), a.BuildHandle("x"), paddock.NewCmd("true"), paddock.SpawnOpts{Name: "n"})
	requireKind(t, err, paddock.ErrNotSupported, "named spawn is not offered")
}
