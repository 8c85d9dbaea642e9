//go:build unix

package local

import (
	"github.com/paddockhq/paddock"
)

// CountProcesses counts the live processes of a session (test hook).
func (a *Adapter) CountProcesses(h paddock.Handle, id string) int {
	a.mu.Lock()
	s := a.sessions[a.dirOf(h.Name)+"/"+id]
	a.mu.Unlock()
	if s != nil {
		return len(s.rec.members())
	}
	rec, err := readRecord(a.dirOf(h.Name) + "/" + sessionsDir + "/" + id)
	if err != nil {
		return 0
	}
	return len(rec.members())
}

// SessionRecord is a session's record (test hook).
type SessionRecord = sessionRecord

// ReadSessionRecord reads a session's record.
func (a *Adapter) ReadSessionRecord(h paddock.Handle, id string) (SessionRecord, error) {
	return readRecord(a.dirOf(h.Name) + "/" + sessionsDir + "/" + id)
}

// CountMembers counts the live processes a record names.
func CountMembers(rec SessionRecord) int { return len(rec.members()) }

// WithUnkillableHolders makes the processes holding a command's output
// survive being killed (test hook: a process stuck in the kernel).
func WithUnkillableHolders(c *Config) { c.unkillable = true }

// Running reports whether pid is a live process (not a zombie).
func Running(pid int) bool {
	_, ok := processStart(pid)
	return ok
}

// SessionsHaveCgroups reports whether this host gives sessions cgroup
// leaves (root, and a cgroup v2 hierarchy with cgroup.kill).
func SessionsHaveCgroups() bool { return probeCgroups().v2 != "" }

// MachinePID is the pid of the init of the sandbox's machine, 0 if none.
func (a *Adapter) MachinePID(h paddock.Handle) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if m := a.machines[a.dirOf(h.Name)]; m != nil {
		return m.pid
	}
	return 0
}

// StartMachineSpeaking starts an unisolated machine whose adapter side
// claims the given protocol, and closes it (test hook).
func StartMachineSpeaking(protocol int) error {
	m, err := startMachine("protocol-test", "", initConfig{Protocol: protocol}, nil)
	if err == nil {
		m.close()
	}
	return err
}
