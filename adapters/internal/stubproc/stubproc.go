// Package stubproc is what the loopback provider servers (e2btest,
// daytonatest, spritestest) and the local adapter share to run a
// sandbox's commands as processes on this machine: process groups,
// terminals and signals, where the system has them. On Unix systems they work; on Windows a command still starts,
// and signalling it refuses with ErrUnsupported (the servers run commands
// through /bin/sh, which Windows lacks, so their commands fail to start
// there anyway).
package stubproc

import "time"

// Usage is what the processes of some process groups hold now: resident
// memory, and the CPU time they have used so far (GroupsUsage).
type Usage struct {
	RSS int64 // bytes
	CPU time.Duration
}
