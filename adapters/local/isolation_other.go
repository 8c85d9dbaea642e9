//go:build !linux

package local

import (
	"errors"
	"syscall"
)

// Off Linux there are no namespaces: commands run unisolated, each in its
// own process group, and processes are found through their group alone.

const namespacesSupported = false

func nsAttr(bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func plainAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func pidsCgroupRoot() string { return "" }

func newPidsCgroup(string, string, int) (string, func(), error) {
	return "", nil, errors.New("no cgroups here")
}

// processStart reports a live process; its start time is unknown (0).
func processStart(pid int) (uint64, bool) { return 0, syscall.Kill(pid, 0) == nil }

func sameProcess(pid int, _ uint64) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

// groupMembers cannot list a group here; it answers the group id while the
// group has any member.
func groupMembers(pgid int) []int {
	if pgid > 0 && syscall.Kill(-pgid, 0) == nil {
		return []int{pgid}
	}
	return nil
}

func pidNamespace(int) string { return "" }

func namespaceMembers(string) []int { return nil }

func selfStart() uint64 { return 0 }

func signalAll(pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
}
