//go:build unix && !linux

package clients

import "syscall"

// dieWithParent does nothing where the system cannot kill a child with its
// parent: the tests' cleanups stop their children.
func dieWithParent(*syscall.SysProcAttr) {}
