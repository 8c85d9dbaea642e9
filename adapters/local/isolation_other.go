//go:build !linux

package local

import (
	"context"
	"errors"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Off Linux there are no namespaces, cgroups, pidfds or subreapers: a
// sandbox's machine is a plain init process that starts its commands, each
// in its own process group, and processes are found through their group
// alone.

const namespacesSupported = false

func initExecutable() (string, error) { return os.Executable() }

func initAttr(bool, bool, *os.File) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func hostPID(*os.File) int { return 0 }

func growPipe(*os.File) {}

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

func (m *machine) members() []int { return nil }

// cgroupHost offers nothing here.
type cgroupHost struct{ v2, pids string }

func probeCgroups() cgroupHost { return cgroupHost{} }

type machineCgroup struct{}

func (cgroupHost) newMachineCgroup(string, int) (*machineCgroup, error) { return nil, nil }
func (*machineCgroup) initDir() (*os.File, error)                       { return nil, nil }
func (*machineCgroup) joinPids(int) error                               { return nil }
func (*machineCgroup) newLeaf(string) (string, *os.File, error)         { return "", nil, nil }
func (*machineCgroup) commandsProcs() string                            { return "" }
func (*machineCgroup) kill()                                            {}
func (*machineCgroup) remove()                                          {}
func killCgroup(string)                                                 {}
func cgroupProcs(string) []int                                          { return nil }

// processStart reports a live process; its start time is unknown (0).
func processStart(pid int) (uint64, bool) { return 0, syscall.Kill(pid, 0) == nil }

func sameProcess(pid int, _ uint64) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

func liveOnly(pids []int) []int { return pids }

// groupMembers cannot list a group here; it answers the group id while the
// group has any member.
func groupMembers(pgid int) []int {
	if pgid > 0 && syscall.Kill(-pgid, 0) == nil {
		return []int{pgid}
	}
	return nil
}

func selfStart() uint64 { return 0 }

func signalAll(pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
}

func waitStopped([]int, time.Time) bool { return true }

func dialInNetwork(context.Context, int, string) (net.Conn, error) {
	return nil, errors.New("network namespaces need Linux")
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

// watchSupported: watches need Linux's inotify.
const watchSupported = false

// threadID is unused here: no cgroup joins a thread off Linux.
func threadID() int { return 0 }
