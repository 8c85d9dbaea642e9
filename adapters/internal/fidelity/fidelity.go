// Package fidelity checks an adapter's FIDELITY.md against its tests: every
// test the document names as proof must exist.
package fidelity

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// namedTest is a test or fuzz target named in backquotes.
var namedTest = regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)`")

// RequireNamedTestsExist fails t unless doc names at least min tests and
// each is declared in a file matching one of globs.
func RequireNamedTestsExist(t testing.TB, doc string, min int, globs ...string) {
	t.Helper()
	text, err := os.ReadFile(doc)
	if err != nil {
		t.Fatalf("reading %s: %v", doc, err)
	}
	var sources strings.Builder
	for _, glob := range globs {
		files, err := filepath.Glob(glob)
		if err != nil {
			t.Fatalf("glob %s: %v", glob, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatalf("reading %s: %v", f, err)
			}
			sources.Write(b)
		}
	}
	named := namedTest.FindAllStringSubmatch(string(text), -1)
	if len(named) < min {
		t.Errorf("%s names %d tests, fewer than %d", doc, len(named), min)
	}
	for _, m := range named {
		if !strings.Contains(sources.String(), "func "+m[1]+"(") {
			t.Errorf("%s names %s, which no test declares", doc, m[1])
		}
	}
}
