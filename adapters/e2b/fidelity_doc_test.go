package e2b_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every test FIDELITY.md names exists, in this package, e2btest, or the
// runtime's.
func TestFidelityTableNamesRealTests(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("FIDELITY.md")
	require.NoError(t, err)
	var sources strings.Builder
	for _, glob := range []string{"*_test.go", "e2btest/*_test.go", "../../actors/*_test.go"} {
		files, err := filepath.Glob(glob)
		require.NoError(t, err)
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			sources.Write(b)
		}
	}
	named := regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)`").FindAllStringSubmatch(string(doc), -1)
	require.Greater(t, len(named), 40)
	for _, m := range named {
		assert.Contains(t, sources.String(), "func "+m[1]+"(", "FIDELITY.md names %s", m[1])
	}
}
