package paddock_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The contract lives in the repository: every code comment that cites it
// names an anchor of docs/contract.md that exists (once), and nothing
// cites a document from outside the repository.
func TestCitationsResolveInsideTheRepository(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("docs/contract.md")
	require.NoError(t, err)
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`<a id="([a-z0-9-]+)"></a>`).FindAllStringSubmatch(string(doc), -1) {
		assert.False(t, anchors[m[1]], "docs/contract.md has two anchors #%s: a citation of it is ambiguous", m[1])
		anchors[m[1]] = true
	}
	require.NotEmpty(t, anchors)
	for _, m := range regexp.MustCompile(`\]\(#([a-z0-9-]+)\)`).FindAllStringSubmatch(string(doc), -1) {
		assert.True(t, anchors[m[1]], "docs/contract.md links to a missing anchor #%s", m[1])
	}

	cite := regexp.MustCompile(`docs/contract\.md#([a-z0-9-]+)`)
	outside := regexp.MustCompile(`(?i)(contract sec[t]ion|contract \d|\x{00a7}|hollywood notes|the spec's|\bsec[t]ion \d)`)
	cited := 0
	require.NoError(t, filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".pb.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range cite.FindAllStringSubmatch(string(b), -1) {
			cited++
			assert.True(t, anchors[m[1]], "%s cites docs/contract.md#%s, which does not exist", path, m[1])
		}
		for i, line := range strings.Split(string(b), "\n") {
			if outside.MatchString(line) && path != "docs_test.go" { // (which spells the pattern)
				assert.Failf(t, "a citation of a document outside the repository", "%s:%d: %s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	}))
	assert.Positive(t, cited, "the code cites the contract")
}

// Every document the code or the documents name is in the repository: a
// path ending in .md resolves from the file that names it or from the
// root, and nothing points at the design notes or specs kept outside it.
func TestDocumentsNamedAreInTheRepository(t *testing.T) {
	t.Parallel()
	ref := regexp.MustCompile(`(?:\.\./|\./|[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+\.md\b`)
	outside := regexp.MustCompile(`\.\./shared|hollywood-notes|spec/providers|design/(architecture|style)`)
	named := 0
	names := map[string]bool{} // every file name in the tree: a bare name is one of them
	require.NoError(t, filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names[d.Name()] = true
		}
		return err
	}))
	require.NoError(t, filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) || strings.HasSuffix(path, ".pb.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if outside.MatchString(line) && path != "docs_test.go" {
				assert.Failf(t, "a document outside the repository", "%s:%d: %s", path, i+1, strings.TrimSpace(line))
			}
			if strings.Contains(line, "://") {
				continue // a URL names a page elsewhere on purpose
			}
			for _, m := range ref.FindAllString(line, -1) {
				named++
				_, errHere := os.Stat(filepath.Join(filepath.Dir(path), m))
				_, errRoot := os.Stat(m)
				bare := !strings.Contains(m, "/") && names[m]
				assert.True(t, errHere == nil || errRoot == nil || bare, "%s:%d names %s, which is not in the repository", path, i+1, m)
			}
		}
		return nil
	}))
	assert.Positive(t, named, "the files name documents")
}
