//go:build linux

package local

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procStat reads /proc/<pid>/stat: the state letter, the process group and
// the start time (clock ticks since boot), which with the pid identifies a
// process across pid reuse.
func procStat(pid int) (state byte, pgrp int, start uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')') // the command name may hold spaces and parentheses
	if i < 0 || i+2 >= len(b) {
		return 0, 0, 0, false
	}
	f := strings.Fields(string(b[i+2:]))
	// f[0] is field 3 (state); pgrp is field 5; starttime is field 22.
	if len(f) < 20 {
		return 0, 0, 0, false
	}
	pgrp, _ = strconv.Atoi(f[2])
	start, _ = strconv.ParseUint(f[19], 10, 64)
	return f[0][0], pgrp, start, true
}

// processStart returns a live process's start time, or ok=false.
func processStart(pid int) (uint64, bool) {
	state, _, start, ok := procStat(pid)
	return start, ok && state != 'Z'
}

// sameProcess reports whether pid is still the process that started at
// start (0 = unknown: any live process of that pid).
func sameProcess(pid int, start uint64) bool {
	got, ok := processStart(pid)
	return ok && (start == 0 || got == start)
}

// allPIDs lists the pids in /proc.
func allPIDs() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	pids := make([]int, 0, len(entries))
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// groupMembers lists the live (not zombie) processes of process group pgid.
func groupMembers(pgid int) []int {
	var out []int
	for _, pid := range allPIDs() {
		if state, pgrp, _, ok := procStat(pid); ok && pgrp == pgid && state != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

// liveOnly keeps the pids that are live processes (not zombies).
func liveOnly(pids []int) []int {
	out := pids[:0]
	for _, pid := range pids {
		if _, ok := processStart(pid); ok {
			out = append(out, pid)
		}
	}
	return out
}

// pidNamespace returns the pid-namespace link of a process ("" if gone).
func pidNamespace(pid int) string {
	link, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	if err != nil {
		return ""
	}
	return link
}

// namespaceMembers lists the live processes in the pid namespace ns.
func namespaceMembers(ns string) []int {
	if ns == "" {
		return nil
	}
	var out []int
	for _, pid := range allPIDs() {
		if pidNamespace(pid) == ns {
			if state, _, _, ok := procStat(pid); ok && state != 'Z' {
				out = append(out, pid)
			}
		}
	}
	return out
}

// selfStart is this process's start time.
func selfStart() uint64 {
	start, _ := processStart(os.Getpid())
	return start
}

// signalAll sends sig to each pid, ignoring those already gone.
func signalAll(pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
}

// waitStopped waits, until deadline, for each of pids to be stopped or
// gone, and reports whether they all are.
func waitStopped(pids []int, deadline time.Time) bool {
	for _, pid := range pids {
		for {
			if isStopped(pid) {
				break
			}
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	return true
}

// isStopped reports a process that is gone, stopped, or will stop before it
// runs any more of its own code: a SIGSTOP is pending while it waits in
// the kernel (a shell that vforked a child the suspend stopped first waits
// uninterruptibly for that child, and shows D, not T).
func isStopped(pid int) bool {
	state, _, _, ok := procStat(pid)
	switch {
	case !ok || state == 'T' || state == 't' || state == 'Z':
		return true
	case state != 'D':
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return true // gone
	}
	const sigstop = 1 << (syscall.SIGSTOP - 1)
	for line := range strings.SplitSeq(string(b), "\n") {
		name, value, _ := strings.Cut(line, ":")
		if name != "SigPnd" && name != "ShdPnd" {
			continue
		}
		if mask, err := strconv.ParseUint(strings.TrimSpace(value), 16, 64); err == nil && mask&sigstop != 0 {
			return true
		}
	}
	return false
}

// threadID is the calling thread's id (for a v1 cgroup's tasks file).
func threadID() int { return syscall.Gettid() }
