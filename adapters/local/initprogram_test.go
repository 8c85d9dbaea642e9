//go:build unix

package local_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/adapters/local/localtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sandbox whose init is the program of its own runs its commands, and
// the init is that program.
func TestInitProgram(t *testing.T) {
	t.Parallel()
	path := localtest.InitProgram(t)
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
