//go:build unix

package stubfs

import "syscall"

// groupAttr puts a command in a process group of its own, which the
// servers signal as a whole.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
