//go:build windows

package stubproc

import (
	"errors"
	"os"
	"syscall"
)

// Windows has no such signals; these values are never delivered.
const (
	SIGUSR1 = syscall.Signal(0x1e)
	SIGUSR2 = syscall.Signal(0x1f)
	SIGSTOP = syscall.Signal(0x13)
	SIGCONT = syscall.Signal(0x12)
)

// GroupAttr asks for nothing: Windows has no process groups.
func GroupAttr() *syscall.SysProcAttr { return nil }

// TerminalAttr asks for nothing: Windows has no controlling terminals.
func TerminalAttr(attr *syscall.SysProcAttr) *syscall.SysProcAttr { return attr }

// Signal refuses.
func Signal(int, syscall.Signal) error { return errors.ErrUnsupported }

// SignalGroup refuses.
func SignalGroup(int, syscall.Signal) error { return errors.ErrUnsupported }

// Owner is unknown here.
func Owner(os.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }

// Mkfifo refuses: Windows has no named pipes in its file system.
func Mkfifo(string, uint32) error { return errors.ErrUnsupported }

// NonBlock opens nothing differently: there is no FIFO to open here.
const NonBlock = 0

// SetTerminalSize refuses: Windows has no such terminals.
func SetTerminalSize(*os.File, uint16, uint16) error { return errors.ErrUnsupported }
