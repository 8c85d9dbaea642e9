package fake_test

import (
	"context"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/conformance"
	"github.com/paddockhq/paddock/fake"
)

func TestConformance(t *testing.T) {
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
	// The same fake advertising nothing optional must refuse every gated
	// operation rather than pass silently.
	a := fake.New(fake.WithCapabilities(paddock.NewCapabilitySet(paddock.CapAttach)))
	t.Cleanup(a.Reset)
	conformance.Run(t, conformance.Config{Adapter: a, Fixtures: conformance.FakeFixtures()})
}
