package stubproc_test

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubproc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A group's usage counts its processes' CPU time and resident memory, and
// nothing of a group not asked for.
func TestGroupsUsage(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	cmd.SysProcAttr = stubproc.GroupAttr()
	require.NoError(t, cmd.Start())
	defer func() {
		_ = stubproc.SignalGroup(cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	group := map[int]bool{cmd.Process.Pid: true}
	require.Eventually(t, func() bool {
		u := stubproc.GroupsUsage(group)
		return u.CPU > 0 && u.RSS > 0
	}, time.Minute, 10*time.Millisecond, "the busy loop's CPU and memory show")
	assert.Equal(t, stubproc.Usage{}, stubproc.GroupsUsage(map[int]bool{}), "no groups, nothing")
	assert.Equal(t, stubproc.Usage{}, stubproc.GroupsUsage(map[int]bool{-1: true}), "a group with no process")
}
