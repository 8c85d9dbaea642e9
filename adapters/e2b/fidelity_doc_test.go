package e2b_test

import (
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/fidelity"
)

// Every test FIDELITY.md names exists, in this package, e2btest, or the
// runtime's.
func TestFidelityTableNamesRealTests(t *testing.T) {
	t.Parallel()
	fidelity.RequireNamedTestsExist(t, "FIDELITY.md", 40, "*_test.go", "e2btest/*_test.go", "../../actors/*_test.go")
}
