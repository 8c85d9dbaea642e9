package clients

import "syscall"

// dieWithParent has the child killed when the test process dies, however
// it dies.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
