//go:build unix

package stubproc_test

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/stubproc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A command in a group of its own is reached, with its children, by a
// signal to the group.
func TestSignalGroupReachesTheGroup(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("/bin/sh", "-c", "sleep 60 & wait")
	cmd.SysProcAttr = stubproc.GroupAttr()
	require.NoError(t, cmd.Start())
	require.NoError(t, stubproc.SignalGroup(cmd.Process.Pid, syscall.SIGKILL))
	err := cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	ws := exit.Sys().(syscall.WaitStatus)
	assert.Equal(t, syscall.SIGKILL, ws.Signal())
}

func TestOwner(t *testing.T) {
	t.Parallel()
	info, err := os.Stat(t.TempDir())
	require.NoError(t, err)
	uid, gid, ok := stubproc.Owner(info)
	require.True(t, ok)
	assert.Equal(t, os.Getuid(), uid)
	assert.Equal(t, os.Getgid(), gid)
}
