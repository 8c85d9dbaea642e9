package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// module writes a module whose package signals a process with
// syscall.Kill, which Windows lacks, and whose test imports a package
// only Linux builds.
func module(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":               "module example.com/m\n\ngo 1.24\n",
		"p/p.go":               "package p\n\nimport \"syscall\"\n\nfunc Stop(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }\n",
		"p/p_test.go":          "//go:build unix\n\npackage p\n\nimport (\n\t\"testing\"\n\n\t\"example.com/m/linuxonly\"\n)\n\nfunc TestX(t *testing.T) { _ = linuxonly.X }\n",
		"linuxonly/l_linux.go": "package linuxonly\n\nconst X = 1\n",
	}
	for name, body := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	}
	return dir
}

func TestFindsWhatAPlatformLacks(t *testing.T) {
	t.Parallel()
	dir := module(t)
	cases := []struct {
		platform string
		errors   []string
	}{
		{"linux/amd64", nil},
		{"windows/arm64", []string{"undefined: syscall.Kill"}},
		{"darwin/arm64", []string{"build constraints exclude all Go files", "could not import example.com/m/linuxonly"}},
	}
	for _, c := range cases {
		t.Run(c.platform, func(t *testing.T) {
			t.Parallel()
			goos, goarch, _ := cutPlatform(c.platform)
			n, errs := check(dir, goos, goarch)
			assert.Positive(t, n, "the standard library is checked too")
			require.Len(t, errs, len(c.errors), "%v", errs)
			for i, want := range c.errors {
				assert.Contains(t, errs[i].Error(), want)
			}
		})
	}
}
