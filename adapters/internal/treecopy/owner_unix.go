//go:build unix

package treecopy

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives p the owner info names, where this process may (as
// root); a process that may not keeps its own.
func keepOwner(p string, info fs.FileInfo) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	err := os.Lchown(p, int(st.Uid), int(st.Gid))
	if errors.Is(err, fs.ErrPermission) {
		return nil
	}
	return err
}
