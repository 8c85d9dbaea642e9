//go:build unix

package stubproc

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// The signals the servers send beyond what every system names.
const (
	SIGUSR1 = syscall.SIGUSR1
	SIGUSR2 = syscall.SIGUSR2
	SIGSTOP = syscall.SIGSTOP
	SIGCONT = syscall.SIGCONT
)

// GroupAttr starts a command in a process group of its own.
func GroupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// TerminalAttr makes attr start a command as the leader of a new session
// whose controlling terminal is its stdin, instead of a group's.
func TerminalAttr(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Setpgid, attr.Setsid, attr.Setctty = false, true, true
	return attr
}

// Signal sends sig to the process pid.
func Signal(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// SignalGroup sends sig to the process group pgid.
func SignalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }

// Owner is the user and group owning the file info describes; ok is
// false where the system does not say.
func Owner(info os.FileInfo) (uid, gid int, ok bool) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid), true
	}
	return 0, 0, false
}

// Mkfifo makes a named pipe at path with mode.
func Mkfifo(path string, mode uint32) error { return syscall.Mkfifo(path, mode) }

// NonBlock is the open flag that does not wait for a FIFO's other end.
const NonBlock = syscall.O_NONBLOCK

// SetTerminalSize sets the size of the terminal whose master side is
// master (its foreground process group gets SIGWINCH). The file is held
// open meanwhile: one closed at the same time answers os.ErrClosed, never
// resizes a file that took its number.
func SetTerminalSize(master *os.File, cols, rows uint16) error {
	rc, err := master.SyscallConn()
	if err != nil {
		return err
	}
	var sizeErr error
	if err := rc.Control(func(fd uintptr) {
		sizeErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
	}); err != nil {
		return os.ErrClosed // the only way Control fails on a file that was open
	}
	return sizeErr
}
