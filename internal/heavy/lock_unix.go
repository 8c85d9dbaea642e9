//go:build unix

package heavy

import (
	"os"
	"syscall"
)

// lock takes an exclusive lock on f, waiting for it. The lock belongs to
// the open file, so two opens in one process exclude each other too.
func lock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}
