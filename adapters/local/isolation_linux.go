//go:build linux

package local

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// namespaceFlags are the namespaces an isolated command gets; the network
// namespace is added unless the sandbox has unrestricted egress.
const namespaceFlags = syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC

// nsAttr returns the clone attributes of an isolated command: fresh
// namespaces, plus a user namespace mapping the caller to root inside when
// the caller is not root. The shim dies with this process (Pdeathsig),
// taking its namespace with it.
func nsAttr(network bool) *syscall.SysProcAttr {
	flags := uintptr(namespaceFlags)
	if network {
		flags |= syscall.CLONE_NEWNET
	}
	attr := &syscall.SysProcAttr{Cloneflags: flags, Pdeathsig: syscall.SIGKILL}
	if os.Geteuid() != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
		attr.GidMappingsEnableSetgroups = false
	}
	return attr
}

// namespacesSupported is true on Linux.
const namespacesSupported = true

// pidsCgroupRoot is where per-command process-limit cgroups go, or "" when
// this process cannot create them (not root, or no pids controller). As
// root RLIMIT_NPROC is not enforced, so the cgroup is what stops a fork bomb.
func pidsCgroupRoot() string {
	if os.Geteuid() != 0 {
		return ""
	}
	for _, base := range []string{"/sys/fs/cgroup/pids", "/sys/fs/cgroup"} {
		if base == "/sys/fs/cgroup" && !hasPidsController(base) {
			continue // not cgroup v2, or no pids controller there
		}
		if _, err := os.Stat(base); err != nil {
			continue
		}
		dir := filepath.Join(base, "paddock")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			continue
		}
		if base == "/sys/fs/cgroup" {
			_ = os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+pids"), 0)
			_ = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+pids"), 0)
		}
		return dir
	}
	return ""
}

// newPidsCgroup makes the cgroup of one command with limit processes and
// returns its cgroup.procs file and a cleanup.
func newPidsCgroup(root, id string, limit int) (procs string, remove func(), err error) {
	dir := filepath.Join(root, id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", nil, err
	}
	remove = func() { _ = os.Remove(dir) }
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(limit)), 0); err != nil {
		remove()
		return "", nil, err
	}
	procs = filepath.Join(dir, "cgroup.procs")
	if _, err := os.Stat(procs); err != nil {
		remove()
		return "", nil, errors.New("cgroup has no cgroup.procs")
	}
	return procs, remove, nil
}

// hasPidsController reports a cgroup v2 hierarchy offering pids.
func hasPidsController(base string) bool {
	b, err := os.ReadFile(filepath.Join(base, "cgroup.controllers"))
	return err == nil && slices.Contains(strings.Fields(string(b)), "pids")
}

// plainAttr is the clone attributes of an unisolated command: its own
// process group, killed if this process dies.
func plainAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
