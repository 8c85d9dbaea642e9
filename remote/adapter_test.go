package remote_test

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/conformance"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/remote"
	"github.com/stretchr/testify/require"
)

// pair is a serving node running a runtime over the fake, and a driving
// node with an adapter for it.
type pair struct {
	serving, driving *remote.Node
	rt               *actors.Runtime
	fake             *fake.Adapter
	adapter          *remote.Adapter
}

// newPair starts both nodes with certificates from one authority; lease
// is the remote lease of both sides (0 = the default).
func newPair(t *testing.T, lease time.Duration) *pair {
	t.Helper()
	ca := newAuthority(t)
	p := &pair{serving: startNode(t, ca.mutual(ca.node(t))), driving: startNode(t, ca.mutual(ca.node(t)))}
	p.fake = fake.New()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: p.fake}, Engine: p.serving.Engine,
		ReapInterval: -1, Lease: -1, RemoteLease: lease})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
		p.fake.Reset()
	})
	p.rt = rt
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := remote.NewAdapter(ctx, p.driving, remote.AdapterConfig{Peer: p.serving.Addr(), Provider: paddock.ProviderFake, Lease: lease})
	require.NoError(t, err)
	t.Cleanup(a.Close)
	p.adapter = a
	return p
}

// The remote adapter keeps the contract: the conformance suite against
// the fake served by another node, raw and through this node's runtime.
func TestConformanceAcrossNodes(t *testing.T) {
	t.Parallel()
	p := newPair(t, 0)
	conformance.Run(t, conformance.Config{Adapter: p.adapter, Fixtures: conformance.FakeFixtures()})
}

func TestConformanceAcrossNodesThroughTheRuntime(t *testing.T) {
	t.Parallel()
	p := newPair(t, 0)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: p.adapter}, Engine: p.driving.Engine,
		ReapInterval: -1, Lease: -1})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
	})
	conformance.RunRuntime(t, rt, paddock.ProviderFake, conformance.Config{Fixtures: conformance.FakeFixtures()})
}
