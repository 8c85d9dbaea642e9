package local

import (
	"os"
	"path/filepath"
	"strings"
)

// notRunnable is a program a shell would not run: absent (exit 127) or
// present but not an executable file (126). The command still starts,
// as it does under a shell: it prints why on stderr and exits with Code.
type notRunnable struct {
	Code   int
	Reason string // what a shell says after the program's name
}

func (e *notRunnable) Error() string { return e.Reason }

// Exit codes of a program a shell cannot run.
const (
	exitNotFound      = 127
	exitNotExecutable = 126
)

// lookPath finds file as a shell would, but in the sandbox's PATH rather
// than the host process's. A program it cannot run is *notRunnable.
func lookPath(file, path string) (string, error) {
	if strings.Contains(file, "/") {
		if _, err := os.Stat(file); err != nil {
			return "", &notRunnable{Code: exitNotFound, Reason: "No such file or directory"}
		}
		if !isExecutable(file) {
			return "", &notRunnable{Code: exitNotExecutable, Reason: "Permission denied"}
		}
		return file, nil
	}
	denied := false
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, file)
		if isExecutable(p) {
			return p, nil
		}
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			denied = true // a shell reports the first such file, if nothing runnable follows
		}
	}
	if denied {
		return "", &notRunnable{Code: exitNotExecutable, Reason: "Permission denied"}
	}
	return "", &notRunnable{Code: exitNotFound, Reason: "command not found"}
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}
