package local

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// errNotFoundInPath is a program that no directory of the sandbox's PATH
// holds.
var errNotFoundInPath = errors.New("executable file not found in the sandbox's PATH")

// lookPath finds file as a shell would, but in the sandbox's PATH rather
// than the host process's.
func lookPath(file, path string) (string, error) {
	if strings.Contains(file, "/") {
		if isExecutable(file) {
			return file, nil
		}
		return "", &os.PathError{Op: "exec", Path: file, Err: os.ErrNotExist}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		if p := filepath.Join(dir, file); isExecutable(p) {
			return p, nil
		}
	}
	return "", &os.PathError{Op: "exec", Path: file, Err: errNotFoundInPath}
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}
