package conformance_test

import (
	"testing"

	"github.com/paddockhq/paddock/conformance"
	"github.com/paddockhq/paddock/fake"
)

// The whole suite is one call from an adapter's own test.
func Example() {
	_ = func(t *testing.T) {
		a := fake.New()
		t.Cleanup(a.Reset)
		conformance.Run(t, conformance.Config{Adapter: a, Fixtures: conformance.FakeFixtures()})
	}
}
