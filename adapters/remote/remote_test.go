package remote_test

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	hremote "github.com/anthdm/hollywood/remote"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/remote"
	"github.com/paddockhq/paddock/adapters/remote/remotetest"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// authority is a test certificate authority.
type authority struct{ *remotetest.Authority }

func newAuthority(t *testing.T) authority {
	t.Helper()
	a, err := remotetest.NewAuthority("paddock test CA")
	require.NoError(t, err)
	return authority{a}
}

// node issues a certificate for 127.0.0.1, for server and client use.
func (a authority) node(t *testing.T) tls.Certificate {
	t.Helper()
	cert, err := a.Issue("127.0.0.1")
	require.NoError(t, err)
	return cert
}

// mutual is the mutual TLS of a node with cert, trusting a.
func (a authority) mutual(cert tls.Certificate) *tls.Config { return a.Mutual(cert) }

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func startNode(t *testing.T, tlsConfig *tls.Config) *remote.Node {
	t.Helper()
	n, err := remote.StartNode(remote.NodeConfig{Addr: freeAddr(t), TLS: tlsConfig})
	require.NoError(t, err)
	t.Cleanup(n.Stop)
	return n
}

// startRuntime starts a runtime on e over provider p's adapter a, without
// reaps or leases, shut down when the test ends; tweaks change its
// configuration.
func startRuntime(t *testing.T, e *actor.Engine, p paddock.Provider, a paddock.Adapter, tweaks ...func(*actors.Config)) *actors.Runtime {
	t.Helper()
	cfg := actors.Config{Adapters: paddock.Registry{p: a}, Engine: e, ReapInterval: -1, Lease: -1}
	for _, tweak := range tweaks {
		tweak(&cfg)
	}
	rt, err := actors.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
	})
	return rt
}

// serve runs a runtime over the fake on n, and returns the fake.
func serve(t *testing.T, n *remote.Node) (*actors.Runtime, *fake.Adapter) {
	t.Helper()
	f := fake.New()
	return startRuntime(t, n.Engine, paddock.ProviderFake, f), f
}

func TestConfigRefusesAnythingButMutualTLS(t *testing.T) {
	t.Parallel()
	ca := newAuthority(t)
	good := ca.mutual(ca.node(t))
	oneWay := good.Clone()
	oneWay.ClientAuth = tls.NoClientCert
	noCAs := good.Clone()
	noCAs.ClientCAs = nil
	noCert := good.Clone()
	noCert.Certificates = nil
	skip := good.Clone()
	skip.InsecureSkipVerify = true
	cases := []struct {
		name string
		cfg  remote.NodeConfig
	}{
		{"plaintext", remote.NodeConfig{Addr: "127.0.0.1:4000"}},
		{"no client certificates asked", remote.NodeConfig{Addr: "127.0.0.1:4000", TLS: oneWay}},
		{"no authority for clients", remote.NodeConfig{Addr: "127.0.0.1:4000", TLS: noCAs}},
		{"no certificate of its own", remote.NodeConfig{Addr: "127.0.0.1:4000", TLS: noCert}},
		{"verification off", remote.NodeConfig{Addr: "127.0.0.1:4000", TLS: skip}},
		{"an address peers cannot answer", remote.NodeConfig{Addr: ":4000", TLS: good}},
		{"the unspecified address", remote.NodeConfig{Addr: "0.0.0.0:4000", TLS: good}},
		{"no port", remote.NodeConfig{Addr: "127.0.0.1", TLS: good}},
		{"a negative buffer", remote.NodeConfig{Addr: "127.0.0.1:4000", TLS: good, BufferSize: -1}},
	}
	for _, c := range cases {
		_, err := remote.StartNode(c.cfg)
		require.ErrorIs(t, err, paddock.ErrInvalid, c.name)
	}
}

func TestOnlyMessagesCross(t *testing.T) {
	t.Parallel()
	assert.True(t, remote.Allowed(&messages.GetRequest{}))
	assert.True(t, remote.Allowed(&messages.Stdout{Data: []byte("x")}))
	for name, v := range map[string]any{
		"nil":                        nil,
		"a typed nil":                (*messages.GetRequest)(nil),
		"a string":                   "hello",
		"a struct":                   struct{ A int }{1},
		"a message value, not a ptr": messages.GetRequest{}, //nolint:govet // the point: a value is refused
		"another package's message":  &actor.PID{Address: "a", ID: "b"},
	} {
		assert.False(t, remote.Allowed(v), name)
	}
	e, err := actor.NewEngine(actor.NewEngineConfig())
	require.NoError(t, err)
	err = remote.Send(e, actor.NewPID("127.0.0.1:1", "x"), "not a message", nil)
	require.ErrorIs(t, err, paddock.ErrInvalid)
}

// A node with a certificate from the authority drives another node's
// runtime; a peer without one, or with one from another authority, can
// neither send it a request nor get an answer: its connections reach the
// serving node and the TLS handshake refuses them.
func TestNodesAuthenticateEachOther(t *testing.T) {
	t.Parallel()
	ca := newAuthority(t)
	var hellos atomic.Int32
	servingTLS := ca.mutual(ca.node(t))
	servingTLS.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) { hellos.Add(1); return nil, nil }
	serving := startNode(t, servingTLS)
	rt, _ := serve(t, serving)
	driving := startNode(t, ca.mutual(ca.node(t)))

	ctx := context.Background()
	res, err := driving.Engine.Request(rt.PID(), &messages.CreateRequest{Id: "r1", Provider: string(paddock.ProviderFake), Name: "box"}, 30*time.Second).Result()
	require.NoError(t, err)
	reply, ok := res.(*messages.CreateReply)
	require.True(t, ok, "%T", res)
	assert.Nil(t, reply.GetFailure())
	_, err = rt.Adapter(paddock.ProviderFake).Get(ctx, paddock.Handle{Provider: paddock.ProviderFake, Name: "box"})
	require.NoError(t, err, "the authenticated peer's create reached the runtime")

	rogueCA := newAuthority(t)
	for name, tlsConfig := range map[string]*tls.Config{
		"a certificate from another authority": rogueCA.mutual(rogueCA.node(t)),
		"no certificate, trusting the server": {RootCAs: ca.Pool, // it presents none when it dials
			GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { // (hollywood listens with it too)
				return rogueCA.mutual(rogueCA.node(t)), nil
			}},
	} {
		// An attacker's node: hollywood's remote as is, not this package
		// (which would refuse its configuration).
		r := hremote.New(freeAddr(t), hremote.NewConfig().WithTLS(tlsConfig))
		e, err := actor.NewEngine(actor.NewEngineConfig().WithRemote(r))
		require.NoError(t, err)
		t.Cleanup(func() { r.Stop().Wait() })
		before := hellos.Load()
		_, err = e.Request(rt.PID(), &messages.CreateRequest{Id: "r2", Provider: string(paddock.ProviderFake), Name: "intruder"}, 5*time.Second).Result()
		require.Error(t, err, "%s: no answer", name)
		require.Eventually(t, func() bool { return hellos.Load() > before }, time.Minute, 10*time.Millisecond,
			"%s: its connection reached the serving node", name)
		_, err = rt.Adapter(paddock.ProviderFake).Get(ctx, paddock.Handle{Provider: paddock.ProviderFake, Name: "intruder"})
		assert.ErrorIs(t, err, paddock.ErrNotFound, "%s: the handshake refused it, so no request reached the runtime", name)
	}
}
