//go:build unix

package local_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// builtInit is cmd/paddock-init built once for this test binary, in a
// directory TestMain removes. It is built without the race detector: the
// load cases start hundreds of sandboxes, and every init re-executed from a
// test binary built with -race starts the detector's runtime, which costs
// four times what the rest of the plain program's start does.
var builtInit struct {
	once      sync.Once
	dir, path string
	err       error
}

// initProgram returns the built init program, building it on first use.
func initProgram(t testing.TB) string {
	t.Helper()
	builtInit.once.Do(func() {
		builtInit.dir, builtInit.err = os.MkdirTemp("", "paddock-init-")
		if builtInit.err != nil {
			return
		}
		builtInit.path = filepath.Join(builtInit.dir, "paddock-init")
		out, err := exec.Command("go", "build", "-o", builtInit.path, "github.com/paddockhq/paddock/cmd/paddock-init").CombinedOutput()
		if err != nil {
			builtInit.err = &buildError{err: err, out: string(out)}
		}
	})
	require.NoError(t, builtInit.err, "building cmd/paddock-init")
	return builtInit.path
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// removeInitProgram removes what initProgram built.
func removeInitProgram() {
	if builtInit.dir != "" {
		_ = os.RemoveAll(builtInit.dir)
	}
}

// A sandbox whose init is the program of its own runs its commands, and
// the init is that program.
func TestInitProgram(t *testing.T) {
	t.Parallel()
	path := initProgram(t)
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			a := newLocal(t, opt, withInitProgram(path))
			h := box(t, a, "own-init")
			out, code := execOut(t, a, h, "echo hello")
			assert.Equal(t, "hello\n", out)
			assert.Equal(t, 0, code)
			_, code = execOut(t, a, h, "no-such-program-here")
			assert.Equal(t, 127, code, "a program that cannot run exits as under a shell, played by the init program")
			exe, err := os.Readlink("/proc/" + itoa(a.MachinePID(h)) + "/exe")
			require.NoError(t, err)
			assert.Equal(t, path, exe)
		})
	}
}

func TestInitProgramMustExist(t *testing.T) {
	t.Parallel()
	_, err := local.New(config(withRoot(t.TempDir()), withInitProgram(filepath.Join(t.TempDir(), "missing"))))
	var invalid *paddock.InvalidError
	require.ErrorAs(t, err, &invalid)
	assert.Contains(t, invalid.Detail, "init program")
}

// An init that speaks another protocol (a program of another version)
// refuses to start, saying why.
func TestInitOfAnotherProtocolRefuses(t *testing.T) {
	t.Parallel()
	err := local.StartMachineSpeaking(99)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "protocol")
}
