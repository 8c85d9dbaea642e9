package adapters_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// roles maps each method of the contract to the file that holds it.
var roles = map[string]string{
	"Provider": "adapter.go", "Capabilities": "adapter.go", "BuildHandle": "adapter.go",
	"Create": "sandbox.go", "CreateNew": "sandbox.go", "Get": "sandbox.go", "Destroy": "sandbox.go",
	"DestroyOnce": "sandbox.go", "ListAllNames": "sandbox.go", "Suspend": "sandbox.go", "Resume": "sandbox.go",
	"ApplyNetworkPolicy": "sandbox.go", "PublicURL": "sandbox.go", "HeartbeatInterval": "sandbox.go", "Heartbeat": "sandbox.go",
	"Exec":         "exec.go",
	"Spawn":        "stream.go",
	"ListSessions": "session.go", "Attach": "session.go", "TerminateSession": "session.go",
	"WriteFile": "files.go", "ReadFile": "files.go", "HostPath": "files.go",
	"ListDir": "filemanager.go", "Stat": "filemanager.go", "Remove": "filemanager.go", "Rename": "filemanager.go", "MakeDir": "filemanager.go",
	"Watch":  "watch.go",
	"Expose": "expose.go", "Revoke": "expose.go",
	"CreateCheckpoint": "checkpoints.go", "RestoreCheckpoint": "checkpoints.go", "ListCheckpoints": "checkpoints.go",
	"CreateCheckpointOnce": "checkpoints.go", "DeleteCheckpoint": "checkpoints.go", "Fork": "checkpoints.go",
	"RenewLeases": "lease.go", "SandboxFacts": "lease.go", "Reclaim": "lease.go", "StopIdle": "lease.go",
}

// forbidden are the packages no adapter imports: the runtime, and the
// suite that tests adapters.
var forbidden = []string{
	"github.com/paddockhq/paddock/actors",
	"github.com/paddockhq/paddock/supervisor",
	"github.com/paddockhq/paddock/conformance",
}

// pkg is the non-test Go files of one directory, parsed.
type pkg map[string]*ast.File

func parseDir(t *testing.T, fset *token.FileSet, dir string) pkg {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	files := pkg{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ImportsOnly|parser.ParseComments)
		require.NoError(t, err)
		if full, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0); err == nil {
			f.Decls = full.Decls
		}
		files[name] = f
	}
	return files
}

// withoutSystem is a file's name without a system suffix (watch_linux.go
// is watch.go).
func withoutSystem(name string) string {
	base := strings.TrimSuffix(name, ".go")
	for _, sys := range []string{"_linux", "_darwin", "_windows", "_freebsd", "_unix", "_other"} {
		base = strings.TrimSuffix(base, sys)
	}
	return base + ".go"
}

// receiver is the type a method is declared on ("" for a function).
func receiver(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// isNew reports a func New(Config) (*Adapter, error).
func isNew(fd *ast.FuncDecl) bool {
	ft := fd.Type
	if fd.Recv != nil || fd.Name.Name != "New" || ft.Params == nil || len(ft.Params.List) != 1 || ft.Results == nil || len(ft.Results.List) != 2 {
		return false
	}
	param, ok := ft.Params.List[0].Type.(*ast.Ident)
	star, ok2 := ft.Results.List[0].Type.(*ast.StarExpr)
	errType, ok3 := ft.Results.List[1].Type.(*ast.Ident)
	if !ok || !ok2 || !ok3 {
		return false
	}
	adapter, ok := star.X.(*ast.Ident)
	return ok && param.Name == "Config" && adapter.Name == "Adapter" && errType.Name == "error"
}

func TestEveryAdapterHasTheShape(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	checked := 0
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "internal" {
			continue
		}
		name := e.Name()
		checked++
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fset := token.NewFileSet()
			files := parseDir(t, fset, name)
			for _, required := range []string{"doc.go", "config.go", "adapter.go"} {
				assert.Contains(t, files, required, "every adapter has %s", required)
			}
			hasNew, adapterIn := false, ""
			for file, f := range files {
				for _, d := range f.Decls {
					switch d := d.(type) {
					case *ast.FuncDecl:
						if isNew(d) {
							hasNew = true
							assert.Equal(t, "config.go", file, "New is in config.go")
						}
						if receiver(d) != "Adapter" {
							continue
						}
						if want, ok := roles[d.Name.Name]; ok {
							assert.Equal(t, want, withoutSystem(file), "(*Adapter).%s is in %s", d.Name.Name, want)
						}
					case *ast.GenDecl:
						for _, s := range d.Specs {
							if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.Name == "Adapter" {
								adapterIn = file
							}
						}
					}
				}
			}
			assert.True(t, hasNew, "New(Config) (*Adapter, error) is the one constructor")
			assert.Equal(t, "adapter.go", adapterIn, "the Adapter type is in adapter.go")
			test, err := os.ReadDir(filepath.Join(name, name+"test"))
			require.NoError(t, err, "%stest holds what a test needs of the provider", name)
			goFiles := 0
			for _, f := range test {
				if strings.HasSuffix(f.Name(), ".go") && !strings.HasSuffix(f.Name(), "_test.go") {
					goFiles++
				}
			}
			assert.Positive(t, goFiles, "%stest is a package of Go files", name)
		})
	}
	assert.GreaterOrEqual(t, checked, 6, "daytona, docker, e2b, local, remote and sprites at least")
}

// No package under adapters/ (tests aside) imports the runtime or the
// conformance suite.
func TestNoAdapterImportsTheRuntime(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	dirs := 0
	require.NoError(t, filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || strings.Contains(path, "testdata") {
			return err
		}
		dirs++
		for file, f := range parseDir(t, fset, path) {
			for _, imp := range f.Imports {
				p, err := strconv.Unquote(imp.Path.Value)
				require.NoError(t, err)
				for _, bad := range forbidden {
					assert.False(t, p == bad || strings.HasPrefix(p, bad+"/"), "%s imports %s", filepath.Join(path, file), p)
				}
			}
		}
		return nil
	}))
	assert.Greater(t, dirs, 10, "the walk saw the adapters")
}
