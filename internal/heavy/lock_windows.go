//go:build windows

package heavy

import (
	"os"

	"golang.org/x/sys/windows"
)

// lock takes an exclusive lock on f's first byte, waiting for it. A lock
// belongs to the open handle, so two opens in one process exclude each
// other too.
func lock(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, new(windows.Overlapped))
}
