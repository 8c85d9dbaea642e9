//go:build unix

package treecopy_test

import "syscall"

// mkfifo makes a FIFO, a kind of file Copy leaves out.
func mkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }
