package local

import "github.com/paddockhq/paddock"

// AllStopped reports whether every live process of a session is stopped
// (state T, or a SIGSTOP pending while it waits in the kernel), and that
// there is at least one (test hook).
func (a *Adapter) AllStopped(h paddock.Handle, id string) bool {
	rec, err := a.ReadSessionRecord(h, id)
	if err != nil {
		return false
	}
	pids := rec.members()
	for _, pid := range pids {
		if !isStopped(pid) {
			return false
		}
	}
	return len(pids) > 0
}
