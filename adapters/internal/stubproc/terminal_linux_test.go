package stubproc_test

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A job a shell left on its terminal, in a group of its own, holds the
// terminal after the shell exits; a signal to the shell's session reaches
// it, and then nothing holds the terminal and its output reads to the end.
func TestTerminalHeldAndSignalSession(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("/bin/sh", "-c", "set -m; sleep 600 & echo job=$!")
	cmd.SysProcAttr = stubproc.TerminalAttr(cmd.SysProcAttr)
	tty, err := pty.StartWithAttrs(cmd, nil, cmd.SysProcAttr)
	require.NoError(t, err)
	defer tty.Close()
	require.NoError(t, cmd.Wait())

	held, err := stubproc.TerminalHeld(tty)
	require.NoError(t, err)
	assert.True(t, held, "the job holds the terminal")

	require.NoError(t, stubproc.SignalSession(cmd.Process.Pid, syscall.SIGKILL))
	require.Eventually(t, func() bool {
		held, err := stubproc.TerminalHeld(tty)
		return err == nil && !held
	}, time.Minute, 10*time.Millisecond, "the killed job lets the terminal go")

	out, err := io.ReadAll(tty)
	var pathErr *os.PathError
	require.ErrorAs(t, err, &pathErr, "a terminal nobody holds reads to EIO")
	assert.ErrorIs(t, err, syscall.EIO)
	job := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "job="))
	pid, err := strconv.Atoi(job)
	require.NoError(t, err, "output %q", out)
	assert.NotEqual(t, cmd.Process.Pid, pid)
}
