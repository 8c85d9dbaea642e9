// Package procid names a process so that another process can tell whether
// it still runs: host, pid and start time (a reused pid is not mistaken
// for the process that had it).
package procid

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Self names this process as host/pid/start.
func Self() string { return Of(os.Getpid()) }

// Of names the process pid of this host as host/pid/start (start empty
// when it is not running).
func Of(pid int) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, pid, start(pid))
}

// State says whether the process id names is alive: known is false when
// id is not of this form or names a process of another host, and then
// nothing may be concluded.
func State(id string) (alive, known bool) {
	parts := strings.Split(id, "/")
	if len(parts) != 3 {
		return false, false
	}
	host, _ := os.Hostname()
	if parts[0] != host {
		return false, false
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return false, false
	}
	s := start(pid)
	return s != "" && s == parts[2], true
}

// start is a process's start time in clock ticks since boot (field 22 of
// /proc/<pid>/stat), "" when it is not running here.
func start(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) may hold spaces; it ends at the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}
