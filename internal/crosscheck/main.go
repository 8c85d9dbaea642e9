// Command crosscheck type-checks every package of the module, its tests
// included, for other platforms without compiling anything: for each
// GOOS/GOARCH given it asks go list for the packages and files that
// platform builds (cgo off, as in a cross build), then checks them, the
// standard library and every dependency, from source with go/types. It
// finds what a cross build would refuse in the compiler's front end (a
// symbol or struct field the platform lacks, a package whose files its
// build constraints exclude) in seconds per platform, where compiling
// every dependency for each platform takes minutes. It exits 1 when a
// platform has an error, listing them.
//
//	go run ./internal/crosscheck darwin/arm64 windows/amd64 freebsd/amd64
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: crosscheck GOOS/GOARCH...")
		os.Exit(2)
	}
	failed := false
	for _, platform := range os.Args[1:] {
		goos, goarch, ok := cutPlatform(platform)
		if !ok {
			fmt.Fprintf(os.Stderr, "crosscheck: %q is not GOOS/GOARCH\n", platform)
			os.Exit(2)
		}
		start := time.Now()
		n, errs := check(".", goos, goarch)
		for _, err := range errs {
			fmt.Printf("%s: %v\n", platform, err)
		}
		fmt.Printf("%s: %d packages, %d errors, %.1f s\n", platform, n, len(errs), time.Since(start).Seconds())
		failed = failed || len(errs) > 0
	}
	if failed {
		os.Exit(1)
	}
}

// cutPlatform splits "GOOS/GOARCH".
func cutPlatform(platform string) (goos, goarch string, ok bool) {
	goos, goarch, ok = strings.Cut(platform, "/")
	return goos, goarch, ok && goos != "" && goarch != ""
}

// listed is what crosscheck reads of go list's answer.
type listed struct {
	ImportPath string
	Dir        string
	Standard   bool
	GoFiles    []string
	CgoFiles   []string
	ImportMap  map[string]string
	Module     *struct{ GoVersion string }
	Error      *struct{ Err string }
	DepsErrors []*struct{ Err string }
}

// check type-checks the packages and tests of the module in dir, with
// everything they depend on, for goos/goarch; it answers how many packages
// it checked and the errors.
func check(dir, goos, goarch string) (int, []error) {
	cmd := exec.Command("go", "list", "-e", "-deps", "-test", "-json", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, []error{fmt.Errorf("go list: %v: %s", err, stderr.String())}
	}
	sizes := types.SizesFor("gc", goarch)
	if sizes == nil {
		return 0, []error{fmt.Errorf("no sizes for GOARCH %s", goarch)}
	}
	fset := token.NewFileSet()
	done := map[string]*types.Package{"unsafe": types.Unsafe}
	var errs []error
	n := 0
	dec := json.NewDecoder(bytes.NewReader(out))
	for { // go list -deps lists every package after its dependencies
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return n, append(errs, fmt.Errorf("reading go list: %w", err))
		}
		if p.ImportPath == "unsafe" || strings.HasSuffix(p.ImportPath, ".test") {
			continue // unsafe is built in; a .test main is generated
		}
		if p.Error != nil {
			errs = append(errs, fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err))
			continue
		}
		pkg, err := checkPackage(fset, sizes, p, done)
		n++
		if err != nil {
			errs = append(errs, err)
		}
		done[p.ImportPath] = pkg
	}
	return n, errs
}

// checkPackage parses and type-checks one package against the packages
// already checked.
func checkPackage(fset *token.FileSet, sizes types.Sizes, p listed, done map[string]*types.Package) (*types.Package, error) {
	var files []*ast.File
	for _, name := range append(p.GoFiles, p.CgoFiles...) {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.ImportPath, err)
		}
		files = append(files, f)
	}
	var first error
	conf := types.Config{
		Importer: importer{done: done, mapping: p.ImportMap},
		Sizes:    sizes,
		Error: func(err error) {
			if first == nil {
				first = err
			}
		},
	}
	if p.Module != nil && !p.Standard {
		conf.GoVersion = "go" + p.Module.GoVersion
	}
	path, _, _ := strings.Cut(p.ImportPath, " ") // "pkg [pkg.test]" is pkg with its tests
	pkg, _ := conf.Check(path, fset, files, nil)
	if first != nil && !p.Standard {
		return pkg, first
	}
	if first != nil {
		return pkg, fmt.Errorf("%s (standard library): %w", p.ImportPath, first)
	}
	return pkg, nil
}

// importer finds an import among the packages already checked, through
// the importing package's import map (a test build's variants).
type importer struct {
	done    map[string]*types.Package
	mapping map[string]string
}

func (im importer) Import(path string) (*types.Package, error) {
	if to, ok := im.mapping[path]; ok {
		path = to
	}
	if pkg, ok := im.done[path]; ok && pkg != nil {
		return pkg, nil
	}
	return nil, fmt.Errorf("%s was not checked before its importer", path)
}
