package stubfs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sandboxDir makes a sandbox directory with its home and tmp, and a file
// in its tmp.
func sandboxDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sb")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "home"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "tmp"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tmp", "mine"), []byte("sandbox"), 0o644))
	return dir
}

// run runs a script in the space and returns its output.
func run(t *testing.T, sp *stubfs.Space, cwd, script string) string {
	t.Helper()
	cmd, err := sp.Command(cwd, "sh", "-c", script)
	require.NoError(t, err)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return string(out)
}

// Where the probe says mounts work, every process of a mapped space sees
// the sandbox's /tmp and /home, and starts in the directory asked for even
// when the mounts cover it.
func TestMappedProcessesSeeTheSandbox(t *testing.T) {
	t.Parallel()
	if !stubfs.Probe(t.TempDir()) {
		t.Skip("mount namespaces are unavailable here (the servers then run processes on this machine's paths)")
	}
	dir := sandboxDir(t)
	sp := stubfs.NewSpace(dir, true)
	defer sp.Close()
	assert.Equal(t, "sandbox", run(t, sp, "/", "cat /tmp/mine && echo made > /home/new"))
	made, err := os.ReadFile(filepath.Join(dir, "home", "new"))
	require.NoError(t, err)
	assert.Equal(t, "made\n", string(made))

	// The sandbox's home is the working directory, though /tmp (where the
	// test's directory may be) is covered by the sandbox's.
	home := filepath.Join(dir, "home")
	assert.Equal(t, "new\n", run(t, sp, home, "ls"))

	// Every command enters the same namespace.
	first := run(t, sp, "/", "readlink /proc/self/ns/mnt")
	assert.Equal(t, first, run(t, sp, "/", "readlink /proc/self/ns/mnt"))
	host, err := os.Readlink("/proc/self/ns/mnt")
	require.NoError(t, err)
	assert.NotEqual(t, host+"\n", first, "not this machine's")

	// Closed, the next command gets a namespace again.
	sp.Close()
	assert.Equal(t, "sandbox", run(t, sp, "/", "cat /tmp/mine"))
}

// A space that is not mapped runs on this machine's paths.
func TestUnmappedProcessesSeeThisMachine(t *testing.T) {
	t.Parallel()
	dir := sandboxDir(t)
	sp := stubfs.NewSpace(dir, false)
	defer sp.Close()
	assert.Equal(t, "sandbox", run(t, sp, filepath.Join(dir, "tmp"), "cat mine"))
	assert.NoFileExists(t, "/tmp/mine")
	out := run(t, sp, dir, "pwd")
	assert.Equal(t, dir, strings.TrimSpace(out))
}

// A missing program starts, says so on stderr and exits 127, as under the
// providers' daemons.
func TestAMissingProgramExits127(t *testing.T) {
	t.Parallel()
	for _, mapped := range []bool{false, stubfs.Probe(t.TempDir())} {
		sp := stubfs.NewSpace(sandboxDir(t), mapped)
		cmd, err := sp.Command("/", "no-such-program-here")
		require.NoError(t, err)
		out, err := cmd.CombinedOutput()
		assert.Equal(t, 127, cmd.ProcessState.ExitCode(), "mapped %v: %s %v", mapped, out, err)
		assert.Contains(t, string(out), "no-such-program-here")
		sp.Close()
	}
}

// A closed space starts its namespace again for the next command; a
// retired one starts nothing, mapped or not.
func TestARetiredSpaceStartsNothing(t *testing.T) {
	t.Parallel()
	for _, mapped := range []bool{false, stubfs.Probe(t.TempDir())} {
		sp := stubfs.NewSpace(sandboxDir(t), mapped)
		sp.Close()
		assert.Equal(t, "again\n", run(t, sp, "/", "echo again"), "mapped %v", mapped)
		sp.Retire()
		_, err := sp.Command("/", "true")
		require.Error(t, err, "mapped %v", mapped)
		sp.Retire()
	}
}
