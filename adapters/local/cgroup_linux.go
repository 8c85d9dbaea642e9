//go:build linux

package local

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/procid"
)

// Control groups, as root: every machine gets a cgroup v2 directory (a
// hierarchy where cgroup.kill exists, the pure v2 one or the unified part
// of a hybrid host) with one leaf for its init and one per session, so a
// session's processes are known exactly (a daemon that leaves the session's
// process group stays in its cgroup) and killed at once; and a pids limit
// on the whole machine (the v2 pids controller, or the v1 pids hierarchy).
// Without them (not root, or a host without these files) the adapter falls
// back to process groups, the init's namespace and RLIMIT_NPROC.

// cgroupHost is what the host offers, probed once per adapter.
type cgroupHost struct {
	v2     string // our directory in a v2 hierarchy with cgroup.kill, or ""
	pids   string // our directory in a hierarchy with a pids controller, or ""
	pidsV2 bool   // pids is the v2 directory itself
}

// probeCgroups finds where this process may make cgroups.
func probeCgroups() cgroupHost {
	var h cgroupHost
	if os.Geteuid() != 0 {
		return h
	}
	for _, base := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		if _, err := os.Stat(filepath.Join(base, "cgroup.controllers")); err != nil {
			continue
		}
		dir := filepath.Join(base, "paddock")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
			continue // before Linux 5.14
		}
		h.v2 = dir
		if hasController(base, "pids") {
			_ = os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+pids"), 0)
			_ = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+pids"), 0)
			if hasController(dir, "pids") && controllerEnabled(dir, "pids") {
				h.pids, h.pidsV2 = dir, true
			}
		}
		break
	}
	if h.pids == "" {
		if _, err := os.Stat("/sys/fs/cgroup/pids/cgroup.procs"); err == nil {
			dir := "/sys/fs/cgroup/pids/paddock"
			if os.MkdirAll(dir, 0o755) == nil {
				h.pids = dir
			}
		}
	}
	h.sweep()
	return h
}

// hasController reports a v2 directory offering controller.
func hasController(dir, controller string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	return err == nil && slices.Contains(strings.Fields(string(b)), controller)
}

// controllerEnabled reports controller enabled for dir's children.
func controllerEnabled(dir, controller string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	return err == nil && slices.Contains(strings.Fields(string(b)), controller)
}

// sweepAge is how old a cgroup named without its owner (by an earlier
// version) must be before a sweep may remove it: a younger one may belong
// to a machine still starting.
const sweepAge = time.Minute

// machineCgroupName names a new machine's cgroup after the process that
// makes it, "m-<pid>-<start>-<random>" (procid's pid and start time), so
// that a sweep can tell a machine whose runtime is gone from one of a live
// runtime, whether its init started yet or not.
func machineCgroupName() string {
	_, owner, _ := strings.Cut(procid.Self(), "/") // pid/start: a cgroup is of this host
	return randomID("m-" + strings.ReplaceAll(owner, "/", "-") + "-")
}

// sweepable reports whether a sweep may remove the machine cgroup name
// (when empty): its owner's process is gone, or, for a name without its
// owner, it is older than sweepAge.
func sweepable(name string, modTime, now time.Time) bool {
	parts := strings.Split(name, "-")
	if len(parts) != 4 || parts[0] != "m" {
		return strings.HasPrefix(name, "m-") && now.Sub(modTime) >= sweepAge
	}
	host, _ := os.Hostname()
	alive, known := procid.State(host + "/" + parts[1] + "/" + parts[2])
	return known && !alive
}

// sweep removes the empty cgroups of machines whose runtime is gone; a
// live runtime's machines are never touched, even before their init is in.
func (h cgroupHost) sweep() {
	now := time.Now()
	for _, root := range []string{h.v2, h.pids} {
		if root == "" {
			continue
		}
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			info, err := e.Info()
			if err != nil || !e.IsDir() || !sweepable(e.Name(), info.ModTime(), now) {
				continue
			}
			dir := filepath.Join(root, e.Name())
			if len(cgroupProcs(dir)) == 0 && len(cgroupProcs(filepath.Join(dir, "init"))) == 0 {
				removeCgroupTree(dir, 0)
			}
		}
	}
}

// machineCgroup is one machine's cgroups.
type machineCgroup struct {
	v2       string // the machine's v2 directory, or ""
	pids     string // its v1 pids directory (the init's, with headroom), or ""
	pidsCmds string // the v1 pids directory of its commands (the limit), or ""
}

// initHeadroom is how many processes and threads beyond the commands'
// limit a machine's cgroup leaves its init: a fork bomb that fills the
// commands' limit must not stop the init from making the thread it needs
// (for a Go program that is fatal).
const initHeadroom = 64

// newMachineCgroup makes the cgroups of machine id with a limit of
// processes; nil when the host offers none.
func (h cgroupHost) newMachineCgroup(id string, limit int) (*machineCgroup, error) {
	if h.v2 == "" && h.pids == "" {
		return nil, nil
	}
	mc := &machineCgroup{}
	if h.v2 != "" {
		mc.v2 = filepath.Join(h.v2, id)
		if err := os.Mkdir(mc.v2, 0o755); err != nil {
			return nil, err
		}
		if err := os.Mkdir(filepath.Join(mc.v2, "init"), 0o755); err != nil {
			mc.remove()
			return nil, err
		}
	}
	switch {
	case h.pidsV2: // the init and the commands share the limit, with headroom
		if err := os.WriteFile(filepath.Join(mc.v2, "pids.max"), []byte(strconv.Itoa(limit+initHeadroom)), 0); err != nil {
			mc.remove()
			return nil, err
		}
	case h.pids != "":
		mc.pids = filepath.Join(h.pids, id)
		mc.pidsCmds = filepath.Join(mc.pids, "cmds")
		// The commands' cgroup also holds the init's starting thread.
		for dir, max := range map[string]int{mc.pids: limit + 1 + initHeadroom, mc.pidsCmds: limit + 1} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				mc.remove()
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0); err != nil {
				mc.remove()
				return nil, err
			}
		}
	}
	return mc, nil
}

// initDir opens the leaf the init starts in, or returns nil.
func (mc *machineCgroup) initDir() (*os.File, error) {
	if mc == nil || mc.v2 == "" {
		return nil, nil
	}
	return os.Open(filepath.Join(mc.v2, "init"))
}

// joinPids puts pid (the init, before it starts anything) under the v1
// pids limit; its children inherit it.
func (mc *machineCgroup) joinPids(pid int) error {
	if mc == nil || mc.pids == "" {
		return nil
	}
	return os.WriteFile(filepath.Join(mc.pids, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
}

// commandsProcs is the tasks file of the commands' v1 pids cgroup, which
// the init's starting thread joins, or "".
func (mc *machineCgroup) commandsProcs() string {
	if mc == nil || mc.pidsCmds == "" {
		return ""
	}
	return filepath.Join(mc.pidsCmds, "tasks")
}

// newLeaf makes the leaf of one session and opens it for the init to start
// the command in; ("", nil) without v2 cgroups.
func (mc *machineCgroup) newLeaf(id string) (string, *os.File, error) {
	if mc == nil || mc.v2 == "" {
		return "", nil, nil
	}
	dir := filepath.Join(mc.v2, id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", nil, err
	}
	f, err := os.Open(dir)
	if err != nil {
		_ = os.Remove(dir)
		return "", nil, err
	}
	return dir, f, nil
}

// kill kills every process of the machine, its init included.
func (mc *machineCgroup) kill() {
	if mc != nil && mc.v2 != "" {
		killCgroup(mc.v2)
	}
}

// remove removes the machine's cgroups once they are empty, waiting up to a
// second for killed processes to leave.
func (mc *machineCgroup) remove() {
	if mc == nil {
		return
	}
	for _, dir := range []string{mc.v2, mc.pids} {
		if dir != "" {
			removeCgroupTree(dir, time.Second)
		}
	}
}

// killCgroup kills every process in the cgroup dir and its descendants.
func killCgroup(dir string) {
	_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
}

// cgroupProcs lists the processes in the cgroup dir (not its descendants).
func cgroupProcs(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	// A read that races forks and exits can list a pid twice (the kernel
	// says so of cgroup.procs): each counts once.
	var out []int
	seen := map[int]bool{}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
			seen[pid] = true
			out = append(out, pid)
		}
	}
	return out
}

// removeCgroupTree removes dir and its child cgroups, retrying for up to
// wait while they still hold exiting processes.
func removeCgroupTree(dir string, wait time.Duration) {
	deadline := time.Now().Add(wait)
	for {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.IsDir() {
				_ = os.Remove(filepath.Join(dir, e.Name()))
			}
		}
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
