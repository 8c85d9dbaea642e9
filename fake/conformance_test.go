package fake_test

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/conformance"
	"github.com/paddockhq/paddock/fake"
	"github.com/stretchr/testify/require"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	a := fake.New()
	t.Cleanup(a.Reset)
	conformance.Run(t, conformance.Config{
		Adapter:  a,
		Fixtures: conformance.FakeFixtures(),
		PreviewProbe: func(_ context.Context, p paddock.Preview) (bool, error) {
			return a.PreviewValid(p), nil
		},
	})
}

func TestConformanceWithoutOptionalCapabilities(t *testing.T) {
	t.Parallel()
	// The same fake advertising nothing optional must refuse every gated
	// operation rather than pass silently.
	a := fake.New(fake.WithCapabilities(paddock.NewCapabilitySet(paddock.CapAttach)))
	t.Cleanup(a.Reset)
	conformance.Run(t, conformance.Config{Adapter: a, Fixtures: conformance.FakeFixtures()})
}

func TestConformanceThroughTheRuntime(t *testing.T) {
	t.Parallel()
	a := fake.New()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: a}})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
		a.Reset()
	})
	conformance.RunRuntime(t, rt, paddock.ProviderFake, conformance.Config{
		Fixtures: conformance.FakeFixtures(),
		PreviewProbe: func(_ context.Context, p paddock.Preview) (bool, error) {
			return a.PreviewValid(p), nil
		},
	})
}
