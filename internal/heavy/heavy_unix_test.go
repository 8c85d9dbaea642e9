//go:build unix

package heavy

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hangBound bounds a wait that must end; it never decides a verdict.
const hangBound = time.Minute

// held reports whether some open file holds the lock at path, by trying
// it without waiting.
func held(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	require.NoError(t, err)
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == syscall.EWOULDBLOCK {
		return true
	}
	require.NoError(t, err)
	return false
}

// requireReleased waits until no open file holds the lock at path. A
// release is observed by polling: a process that another test forks in
// the meantime shares every open file of this one until its exec closes
// them, and holds the lock that long.
func requireReleased(t *testing.T, path string, msg string) {
	t.Helper()
	for deadline := time.Now().Add(hangBound); held(t, path); time.Sleep(time.Millisecond) {
		require.True(t, time.Now().Before(deadline), msg)
	}
}

func TestOpensInOneProcessExcludeEachOther(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	first, err := acquire(path)
	require.NoError(t, err)
	require.True(t, held(t, path))

	second := make(chan *os.File)
	go func() {
		f, err := acquire(path)
		if err != nil {
			f = nil
		}
		second <- f
	}()
	require.True(t, held(t, path), "still the first's")
	require.NoError(t, first.Close())
	select {
	case f := <-second:
		require.NotNil(t, f, "the waiting acquire took the lock")
		require.True(t, held(t, path), "now the second's")
		require.NoError(t, f.Close())
	case <-time.After(hangBound):
		t.Fatal("the lock was not handed to the waiting acquire after the first released it")
	}
	requireReleased(t, path, "released")
}

func TestAnotherProcessIsExcluded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "held\n", line)

	require.True(t, held(t, path), "the other process holds it")
	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait())
	requireReleased(t, path, "its end released it")
}

func TestLockHoldsUntilTheTestEnds(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	t.Run("holder", func(t *testing.T) {
		lockAt(t, path)
		t.Run("subtest", func(t *testing.T) {
			require.True(t, held(t, path), "held in the holder's subtests")
		})
		require.True(t, held(t, path))
	})
	requireReleased(t, path, "released when the holder ended")
}
