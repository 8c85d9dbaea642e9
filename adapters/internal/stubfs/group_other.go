//go:build !unix

package stubfs

import "syscall"

// groupAttr has no process group to ask for here.
func groupAttr() *syscall.SysProcAttr { return nil }
