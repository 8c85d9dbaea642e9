package local

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// confirmPoll is how often termination checks that processes are gone.
const confirmPoll = 5 * time.Millisecond

// terminateLive ends a session this adapter supervises and waits for its
// terminal record and for every process to be gone.
func (a *Adapter) terminateLive(ctx context.Context, s *session, opts paddock.TerminateOpts) error {
	if s.isDone() {
		return nil
	}
	if opts.Mode == paddock.TerminateForce {
		s.signal(syscall.SIGKILL)
	} else {
		s.signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(*opts.Timeout):
		case <-ctx.Done():
			return &paddock.UnavailableError{Detail: paddock.DetailTerminationUnconfirmed}
		}
		s.signal(syscall.SIGKILL)
	}
	select {
	case <-s.exited:
	case <-time.After(paddock.TerminateTransportAllowance):
		return &paddock.UnavailableError{Detail: paddock.DetailTerminationTimeout}
	case <-ctx.Done():
		return &paddock.UnavailableError{Detail: paddock.DetailTerminationUnconfirmed}
	}
	return confirmGone(ctx, s.rec, paddock.TerminateTransportAllowance)
}

// terminateRecord ends a session known only from its record (another
// runtime's).
func terminateRecord(ctx context.Context, rec sessionRecord, opts paddock.TerminateOpts) error {
	if opts.Mode == paddock.TerminateForce {
		signalAll(rec.members(), syscall.SIGKILL)
		return confirmGone(ctx, rec, paddock.TerminateTransportAllowance)
	}
	signalAll(rec.members(), syscall.SIGTERM)
	if confirmGone(ctx, rec, *opts.Timeout) == nil {
		return nil
	}
	signalAll(rec.members(), syscall.SIGKILL)
	return confirmGone(ctx, rec, paddock.TerminateTransportAllowance)
}

// confirmGone polls until no process of the session is left.
func confirmGone(ctx context.Context, rec sessionRecord, within time.Duration) error {
	deadline := time.Now().Add(within)
	for len(rec.members()) > 0 {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return &paddock.UnavailableError{Detail: paddock.DetailTerminationUnconfirmed}
		}
		time.Sleep(confirmPoll)
	}
	return nil
}

// killSandbox kills every process of the sandbox in sbDir, waits (within
// ctx) until the sessions this adapter supervises have recorded their end
// (reason, a detail token, in place of their exits; "": their exits),
// then ends the sandbox's machine, and with it whatever the commands left
// (daemons included).
func (a *Adapter) killSandbox(ctx context.Context, sbDir, reason string) {
	live := a.live(sbDir)
	for _, s := range live {
		s.stopFor(reason)
	}
	for _, rec := range a.unsupervised(sbDir) {
		signalAll(rec.members(), syscall.SIGKILL)
	}
	for _, s := range live {
		select {
		case <-s.exited:
		case <-ctx.Done():
		}
	}
	a.stopMachine(sbDir)
}

// signalSandbox sends sig to every process of the sandbox: those of this
// adapter's machine (its init excepted), and those of sessions another
// runtime supervises. For SIGSTOP it waits until the processes it signalled
// have stopped (a process stops only when it next runs, and may fork
// before that), then rescans, until a pass finds nobody new: a process
// forked meanwhile is stopped too.
func (a *Adapter) signalSandbox(sbDir string, sig syscall.Signal) {
	recs := a.unsupervised(sbDir)
	a.mu.Lock()
	mc := a.machines[sbDir]
	a.mu.Unlock()
	signalled := map[int]bool{}
	deadline := time.Now().Add(stopWait)
	for pass := 0; pass < maxStopPasses; pass++ {
		var pids []int
		if mc != nil {
			pids = mc.members()
		}
		for _, rec := range recs {
			pids = append(pids, rec.members()...)
		}
		fresh := 0
		for _, pid := range pids {
			if !signalled[pid] {
				signalled[pid] = true
				fresh++
				_ = stubproc.Signal(pid, sig)
			}
		}
		if sig != stubproc.SIGSTOP {
			return
		}
		// Done once a pass finds nobody new and everybody signalled has
		// stopped: a stopped process forks no more.
		stopped := waitStopped(pids, deadline)
		if fresh == 0 && stopped {
			return
		}
		if time.Now().After(deadline) && fresh == 0 {
			a.log.Warn().Str("sandbox", sbDir).Msg("local: some processes of a suspended sandbox did not stop in time")
			return
		}
	}
}

// maxStopPasses bounds the rescans of a suspend; stopWait bounds the wait
// for its processes to stop (a process stops when it next runs, which on a
// loaded machine can take a while).
const (
	maxStopPasses = 50
	stopWait      = 30 * time.Second
)

// unsupervised returns the records of the sandbox's unfinished sessions
// that this adapter does not supervise (another runtime's, or orphans).
func (a *Adapter) unsupervised(sbDir string) []sessionRecord {
	root := filepath.Join(sbDir, sessionsDir)
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []sessionRecord
	for _, e := range entries {
		if _, ok := a.sessions[sbDir+"/"+e.Name()]; ok {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, e.Name(), doneFile)); err == nil {
			continue
		}
		if rec, err := readRecord(filepath.Join(root, e.Name())); err == nil {
			out = append(out, rec)
		}
	}
	return out
}
