//go:build !linux

package local

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// Off Linux there are no namespaces, cgroups, pidfds or subreapers: a
// sandbox's machine is a plain init process that starts its commands, each
// in its own process group, and processes are found through their group
// alone.

const namespacesSupported = false

func hostPID(*os.File) int { return 0 }

func growPipe(*os.File) {}

func (m *machine) members() []int { return nil }

// cgroupHost offers nothing here.
type cgroupHost struct{ v2, pids string }

func probeCgroups() cgroupHost { return cgroupHost{} }

type machineCgroup struct{}

func machineCgroupName() string                                         { return "" }
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
func processStart(pid int) (uint64, bool) { return 0, stubproc.Signal(pid, 0) == nil }

func sameProcess(pid int, _ uint64) bool { return pid > 0 && stubproc.Signal(pid, 0) == nil }

func liveOnly(pids []int) []int { return pids }

// groupMembers cannot list a group here; it answers the group id while the
// group has any member.
func groupMembers(pgid int) []int {
	if pgid > 0 && stubproc.Signal(-pgid, 0) == nil {
		return []int{pgid}
	}
	return nil
}

func selfStart() uint64 { return 0 }

func signalAll(pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		_ = stubproc.Signal(pid, sig)
	}
}

func waitStopped([]int, time.Time) bool { return true }

func dialInNetwork(context.Context, int, string) (net.Conn, error) {
	return nil, errors.New("network namespaces need Linux")
}

// watchSupported: watches need Linux's inotify.
const watchSupported = false

// threadID is unused here: no cgroup joins a thread off Linux.
func threadID() int { return 0 }
