package daytona_test

import (
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/fidelity"
)

// Every test FIDELITY.md names exists, in this package or daytonatest.
func TestFidelityTableNamesRealTests(t *testing.T) {
	t.Parallel()
	fidelity.RequireNamedTestsExist(t, "FIDELITY.md", 30, "*_test.go", "daytonatest/*_test.go")
}
