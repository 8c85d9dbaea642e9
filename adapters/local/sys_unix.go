//go:build unix

package local

import "syscall"

// unsupportedSystem is why the adapter cannot run here: "", it can.
const unsupportedSystem = ""

// The signals the contract names beyond what every system has.
const (
	sigUSR1 = syscall.SIGUSR1
	sigUSR2 = syscall.SIGUSR2
	sigSTOP = syscall.SIGSTOP
	sigCONT = syscall.SIGCONT
)

// kill sends sig to a process, or to a process group when pid < 0.
func kill(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }
