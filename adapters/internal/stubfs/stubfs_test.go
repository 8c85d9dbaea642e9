package stubfs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Where the probe says mounts work, a process sees the sandbox's /tmp.
func TestMountedProcessesSeeTheSandbox(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if !stubfs.Probe(root) {
		t.Skip("mount namespaces are unavailable here (the servers then run processes on this machine's paths)")
	}
	dir := filepath.Join(root, "sb")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "home"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "tmp"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tmp", "mine"), []byte("sandbox"), 0o644))
	cmd := exec.Command("/bin/sh", "-c", stubfs.MountScript(dir)+"cat /tmp/mine && echo made > /home/new")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	stubfs.Namespace(cmd.SysProcAttr)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, "sandbox", string(out))
	made, err := os.ReadFile(filepath.Join(dir, "home", "new"))
	require.NoError(t, err)
	require.Equal(t, "made\n", string(made))
}
