//go:build unix && !linux

package local

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// How a sandbox's init starts and runs its commands on a Unix system other
// than Linux (see proc_other.go).

func initExecutable() (string, error) { return os.Executable() }

func initAttr(bool, bool, *os.File) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func egressListener() (int, error) { return -1, errors.New("egress needs Linux") }

func setupMachine(cfg initConfig) error {
	if cfg.Isolated {
		return errors.New("namespaces need Linux")
	}
	return nil
}

func commandAttr(tty bool, _ int, _ *int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: !tty, Setsid: tty, Setctty: tty, Ctty: 0}
}

// killDescendants cannot list descendants here: the init's commands' groups
// die with it only when they are signalled (the adapter kills sessions
// before it ends the machine).
func killDescendants(reap func()) { reap() }

// reapChildren reaps on SIGCHLD.
func (s *initServer) reapChildren() {
	children := make(chan os.Signal, 1)
	signal.Notify(children, syscall.SIGCHLD)
	for range children {
		s.reap()
	}
}

// recvmsgFlags: received descriptors are made close-on-exec by the init,
// which starts commands one at a time.
const recvmsgFlags = 0

// closeOnExecAbove marks the descriptors above fd close-on-exec, as far as
// a scan of the usual range finds them.
func closeOnExecAbove(fd int) {
	for n := fd + 1; n < 1024; n++ {
		syscall.CloseOnExec(n)
	}
}
