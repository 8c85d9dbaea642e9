//go:build linux

package stubfs

import (
	"bytes"

	"golang.org/x/sys/unix"
)

// copyXattrs gives dst the user.* extended attributes of src, as far as
// both files' filesystems keep them.
func copyXattrs(src, dst string) {
	size, err := unix.Llistxattr(src, nil)
	if err != nil || size <= 0 {
		return
	}
	list := make([]byte, size)
	if size, err = unix.Llistxattr(src, list); err != nil {
		return
	}
	for _, name := range bytes.Split(list[:size], []byte{0}) {
		if !bytes.HasPrefix(name, []byte("user.")) {
			continue
		}
		n, err := unix.Lgetxattr(src, string(name), nil)
		if err != nil {
			continue
		}
		value := make([]byte, n)
		if n, err = unix.Lgetxattr(src, string(name), value); err == nil {
			_ = unix.Lsetxattr(dst, string(name), value[:n], 0)
		}
	}
}
