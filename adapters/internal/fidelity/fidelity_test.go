package fidelity_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/fidelity"
	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a testing.TB that keeps its failures.
type recorder struct {
	testing.TB
	failed int
}

func (r *recorder) Errorf(string, ...any) { r.failed++ }
func (r *recorder) Fatalf(string, ...any) { r.failed++ }
func (r *recorder) Helper()               {}

func TestNamedTestsMustExist(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc := filepath.Join(dir, "FIDELITY.md")
	src := filepath.Join(dir, "a_test.go")
	assert.NoError(t, os.WriteFile(src, []byte("func TestThere(t *testing.T) {}\n"), 0o644))
	assert.NoError(t, os.WriteFile(doc, []byte("| row | `TestThere` |\n"), 0o644))
	r := &recorder{TB: t}
	fidelity.RequireNamedTestsExist(r, doc, 1, filepath.Join(dir, "*_test.go"))
	assert.Zero(t, r.failed)
	assert.NoError(t, os.WriteFile(doc, []byte("| row | `TestThere`, `TestMissing` |\n"), 0o644))
	r = &recorder{TB: t}
	fidelity.RequireNamedTestsExist(r, doc, 1, filepath.Join(dir, "*_test.go"))
	assert.Equal(t, 1, r.failed, "a missing test fails")
	r = &recorder{TB: t}
	fidelity.RequireNamedTestsExist(r, doc, 5, filepath.Join(dir, "*_test.go"))
	assert.Equal(t, 2, r.failed, "too few named fails too")
}
