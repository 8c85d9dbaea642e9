package docker

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
)

// Labels hold everything a sandbox must remember: no registry exists
// beside the engine, so any process can manage any sandbox.
const (
	labelPrefix      = "dev.paddock."
	labelManaged     = labelPrefix + "managed"      // "true"
	labelName        = labelPrefix + "name"         // the caller's sandbox name
	labelCreatedAt   = labelPrefix + "created-at"   // RFC 3339 (nanoseconds), UTC
	labelIdleTimeout = labelPrefix + "idle-timeout" // Go duration; negative = none
	labelMaxAge      = labelPrefix + "max-age"      // Go duration; negative = none
	labelOwner       = labelPrefix + "owner"        // host/pid/start of the creating runtime
)

// containerPrefix starts every container name we make.
const containerPrefix = "paddock-"

// containerName derives a container name from a sandbox name:
// deterministic (the same name finds the same sandbox), opaque (caller
// names may say who a tenant is; container names are visible to anyone on
// the engine) and namespaced.
func containerName(sandbox string) string {
	sum := sha256.Sum256([]byte(sandbox))
	return containerPrefix + hex.EncodeToString(sum[:])[:32]
}

// processStart is a process's start time in clock ticks since boot (field
// 22 of /proc/<pid>/stat), "" when it is not running here.
func processStart(pid int) string {
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

// ownerState says whether the runtime an owner label names is alive:
// known is false when it ran on another host (or the label is not ours to
// read), and then nothing may be concluded.
func ownerState(owner string) (alive, known bool) {
	parts := strings.Split(owner, "/")
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
	start := processStart(pid)
	return start != "" && start == parts[2], true
}
