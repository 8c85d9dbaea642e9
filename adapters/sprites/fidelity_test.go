package sprites_test

import (
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/fidelity"
)

// Every test FIDELITY.md names exists, in this package or spritestest.
func TestFidelityTableNamesRealTests(t *testing.T) {
	t.Parallel()
	fidelity.RequireNamedTestsExist(t, "FIDELITY.md", 30, "*_test.go", "spritestest/*_test.go", "../internal/stubfs/*_test.go")
}
