package local

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paddockhq/paddock"
)

var _ paddock.SessionTerminator = (*Adapter)(nil)

// Files of a session directory.
const (
	sessionFile = "session.json"
	journalFile = "journal"
	doneFile    = "done" // exists once the journal holds its terminal record, and holds a copy of it
)

// sessionRecord is session.json: what a later runtime needs to find, and
// if need be kill, the session's processes.
type sessionRecord struct {
	ID         string    `json:"id"`
	Name       string    `json:"name,omitempty"`
	Command    string    `json:"command"`
	TTY        bool      `json:"tty,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	Isolated   bool      `json:"isolated"`
	PID        int       `json:"pid"`       // the leader, as the host numbers it
	PIDStart   uint64    `json:"pid_start"` // its start time, against pid reuse
	PGID       int       `json:"pgid"`      // its process group, as the host numbers it
	Cgroup     string    `json:"cgroup,omitempty"`
	OwnerPID   int       `json:"owner_pid"` // the process supervising it
	OwnerStart uint64    `json:"owner_start"`
}

// session is a command this adapter supervises: its process, the readers
// of its output, and the journal they append to. Subscribers read the
// journal, so replay and live output are one path.
type session struct {
	a     *Adapter
	key   string // sandbox dir + "/" + id
	sbDir string
	dir   string
	rec   sessionRecord
	proc  *started
	out   *os.File // the journal, append-only

	mu              sync.Mutex
	written         int64                // bytes of records on disk: a reader of the file stops there
	unwritten       int                  // records at the end of tail not yet on disk
	pending         int                  // the memory those records hold
	done            bool                 // the terminal record is queued
	end             []byte               // the terminal record, once the command ended
	terminalWritten bool                 // and on disk: subscribers may end
	changed         chan struct{}        // closed (and replaced) on every append
	drained         *sync.Cond           // signalled (on mu) when the writer made room
	kick            chan struct{}        // wakes the writer
	flushed         chan struct{}        // closed once the terminal record is on disk (or the journal broke)
	broken          error                // a journal write failed
	capped          bool                 // the journal reached its cap: the command is being killed
	output          int64                // bytes of output journaled, against the cap
	tail            []tailRecord         // the newest records: every one not yet written, then up to maxTail more
	tailBytes       int                  // bytes of output in tail's written records
	subscribers     map[*stream]struct{} // this process's, while open
	stdinMu         sync.Mutex
	stdinEOF        bool

	exited   chan struct{} // closed once the terminal record is written
	killOnce sync.Once
	reason   string // why it was stopped, when that is its terminal record (under mu)
}

// newSessionID is time-ordered, so listings and pruning sort by age.
func newSessionID() string {
	return fmt.Sprintf("s-%016x-%s", time.Now().UnixNano(), randomID("")[:6])
}

// startSession starts spec as a new session of the sandbox in sbDir.
func (a *Adapter) startSession(sbDir string, m meta, name string, cmd paddock.Cmd, spec startSpec) (*session, error) {
	id := newSessionID()
	dir := filepath.Join(sbDir, sessionsDir, id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, paddock.ErrNotFound // destroyed meanwhile
		}
		return nil, unavailable("spawn", err)
	}
	out, err := os.OpenFile(filepath.Join(dir, journalFile), os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, unavailable("spawn", err)
	}
	spec.session = true
	proc, err := a.runIn(sbDir, m, id, spec)
	if err != nil {
		out.Close()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s := &session{
		a: a, key: sbDir + "/" + id, sbDir: sbDir, dir: dir, proc: proc, out: out,
		changed: make(chan struct{}), exited: make(chan struct{}), kick: make(chan struct{}, 1), flushed: make(chan struct{}),
		rec: sessionRecord{
			ID: id, Name: name, Command: cmd.Line(), TTY: spec.tty, CreatedAt: time.Now().UTC(),
			Isolated: proc.m.isolated, PID: proc.pid, PIDStart: proc.start, PGID: proc.pid, Cgroup: proc.cgroup,
			OwnerPID: os.Getpid(), OwnerStart: selfStart(),
		},
	}
	s.drained = sync.NewCond(&s.mu)
	if err := writeJSON(filepath.Join(dir, sessionFile), s.rec, true); err != nil {
		a.log.Warn().Err(err).Msg("local: session record not written; a later runtime cannot recover it")
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		s.kill()
		<-proc.l.exited
		proc.closeOurs()
		return nil, unavailable("spawn", errClosed)
	}
	a.sessions[s.key] = s
	a.wg.Add(2)
	a.mu.Unlock()
	go s.writeJournal()
	go s.supervise()
	return s, nil
}

// supervise reads the output into the journal, waits for the command, and
// writes the terminal record after all output: its exit, or, when the
// output could not be read to its end, output_truncated (the exit must not
// pass for the end of a whole output).
func (s *session) supervise() {
	defer s.a.wg.Done()
	done := s.proc.read(s.append)
	code, lost, complete := s.proc.finish(done, s.a.drain, nil)
	record := exitRecord(code)
	switch {
	case !complete:
		record = errorRecord(paddock.DetailOutputTruncated)
		s.a.log.Warn().Str("session", s.rec.ID).Msg("local: a process kept the output open after being killed; the output was cut")
	case lost:
		record = errorRecord(paddock.DetailClosedBeforeExit)
	}
	if s.isCapped() {
		record = errorRecord(paddock.DetailSessionOutputLimit)
	}
	if reason := s.stopReason(); reason != "" {
		record = errorRecord(reason)
	}
	s.finish(record)
	s.proc.removeCgroup()
	s.a.retire(s)
}

// mergeBelow is the size under which a subscriber that has fallen behind
// gets an output record together with the written records of the same
// stream after it, up to readChunk bytes in all: one event where the
// command's many small writes made many records.
const mergeBelow = readChunk / 4

// fromTail returns the output at journal offset off, and the size in the
// journal of the records it comes from, if the in-memory tail still holds
// them: one record's bytes as they are (shared, not copied: nothing changes
// them), or, for a small output record with more of its stream written
// after it, those records' bytes joined.
func (s *session) fromTail(off int64) (kind byte, data []byte, disk int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	written := s.tail[:len(s.tail)-s.unwritten]
	i, found := sort.Find(len(written), func(i int) int { return cmp.Compare(off, written[i].off) })
	if !found {
		return 0, nil, 0, false
	}
	first := written[i]
	last, size := i, len(first.data)
	if (first.kind == recStdout || first.kind == recStderr) && size < mergeBelow {
		for last+1 < len(written) && written[last+1].kind == first.kind && size+len(written[last+1].data) <= readChunk {
			last++
			size += len(written[last].data)
		}
	}
	if last == i {
		return first.kind, first.data, first.size, true
	}
	data = make([]byte, 0, size)
	for _, r := range written[i : last+1] {
		data = append(data, r.data...)
		disk += r.size
	}
	return first.kind, data, disk, true
}

// isCapped reports a journal that reached its cap.
func (s *session) isCapped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.capped
}

// snapshot is what a subscriber needs to read on: how far the journal is
// on disk (all a subscriber may read, from the tail or the file), whether
// its terminal record is there, and the channel that announces more.
func (s *session) snapshot() (written int64, done bool, changed <-chan struct{}, broken error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written, s.terminalWritten, s.changed, s.broken
}

// stopFor kills the command for reason (a detail token), which becomes its
// terminal record in place of its exit; "" is a plain kill.
func (s *session) stopFor(reason string) {
	s.mu.Lock()
	if s.reason == "" {
		s.reason = reason
	}
	s.mu.Unlock()
	s.kill()
}

func (s *session) stopReason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

// kill ends the command at once.
func (s *session) kill() {
	s.killOnce.Do(func() { s.signal(syscall.SIGKILL) })
}

// signal sends sig to the command's process group; SIGKILL kills its
// whole cgroup leaf too, where there is one.
func (s *session) signal(sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		s.proc.killTree()
		return
	}
	s.proc.signal(sig)
}

// members lists the session's live processes: those of its cgroup leaf
// (exact: what left its process group is still there), or else those of
// its process group started no earlier than its leader.
func (rec sessionRecord) members() []int {
	if rec.Cgroup != "" {
		return liveOnly(cgroupProcs(rec.Cgroup))
	}
	candidates := groupMembers(rec.PGID)
	var out []int
	for _, pid := range candidates {
		if start, ok := processStart(pid); ok && start >= rec.PIDStart {
			out = append(out, pid)
		}
	}
	return out
}

// retire forgets a finished session and prunes the sandbox's oldest
// finished sessions beyond the kept number.
func (a *Adapter) retire(s *session) {
	a.mu.Lock()
	delete(a.sessions, s.key)
	a.mu.Unlock()
	a.prune(s.sbDir)
}

func (a *Adapter) prune(sbDir string) {
	entries, err := os.ReadDir(filepath.Join(sbDir, sessionsDir))
	if err != nil {
		return
	}
	var finished []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(sbDir, sessionsDir, e.Name(), doneFile)); err == nil {
			finished = append(finished, e.Name())
		}
	}
	sort.Strings(finished) // ids are time-ordered
	for len(finished) > a.keepFinished {
		_ = os.RemoveAll(filepath.Join(sbDir, sessionsDir, finished[0]))
		finished = finished[1:]
	}
}

// live returns this adapter's live sessions of the sandbox in sbDir.
func (a *Adapter) live(sbDir string) []*session {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []*session
	for key, s := range a.sessions {
		if strings.HasPrefix(key, sbDir+"/") {
			out = append(out, s)
		}
	}
	return out
}

// readRecord reads a session's session.json.
func readRecord(dir string) (sessionRecord, error) {
	b, err := os.ReadFile(filepath.Join(dir, sessionFile))
	if err != nil {
		return sessionRecord{}, err
	}
	var rec sessionRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return sessionRecord{}, err
	}
	return rec, nil
}

// JournalBytes is what every session journal under the adapter's root
// holds on disk now (the runtime reports it as a metric).
func (a *Adapter) JournalBytes() int64 {
	paths, _ := filepath.Glob(filepath.Join(a.root, "*", sessionsDir, "*", journalFile))
	var total int64
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			total += st.Size()
		}
	}
	return total
}

// ListSessions lists every session of the sandbox, finished ones included,
// oldest first.
func (a *Adapter) ListSessions(_ context.Context, h paddock.Handle) ([]paddock.Session, error) {
	if _, err := a.readMeta(h.Name); err != nil {
		return nil, err
	}
	root := filepath.Join(a.dirOf(h.Name), sessionsDir)
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, unavailable("listing sessions", err)
	}
	out := make([]paddock.Session, 0, len(entries))
	for _, e := range entries {
		rec, err := readRecord(filepath.Join(root, e.Name()))
		if err != nil {
			continue // starting, or pruned meanwhile
		}
		sess := paddock.Session{ID: rec.ID, Name: rec.Name, Command: rec.Command, CreatedAt: rec.CreatedAt, TTY: rec.TTY}
		if info, err := os.Stat(filepath.Join(root, e.Name(), journalFile)); err == nil {
			sess.LastActivityAt = info.ModTime().UTC()
		}
		switch end, running, err := a.recordedEnd(a.dirOf(h.Name), rec); {
		case err != nil: // unreadable: the state stays unknown
		case running:
			sess.State = paddock.SessionRunning
		case len(end) == 0:
			sess.State = paddock.SessionEnded // a done file from before it held the record
		default:
			if ev, err := endOf(end); err == nil {
				sess.Ended(ev)
			}
		}
		out = append(out, sess)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// recordedEnd is a session's terminal record, from its supervisor in this
// adapter or else its done file; running reports a session a runtime still
// supervises. A session whose runtime is gone without recording an end
// has the end Attach will record for it, closed_before_exit.
func (a *Adapter) recordedEnd(sbDir string, rec sessionRecord) (end []byte, running bool, err error) {
	a.mu.Lock()
	s := a.sessions[sbDir+"/"+rec.ID]
	a.mu.Unlock()
	if s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.end, s.end == nil, nil
	}
	done := filepath.Join(sbDir, sessionsDir, rec.ID, doneFile)
	end, err = os.ReadFile(done)
	if !errors.Is(err, fs.ErrNotExist) {
		return end, false, err
	}
	if sameProcess(rec.OwnerPID, rec.OwnerStart) {
		return nil, true, nil // another runtime supervises it
	}
	end, err = os.ReadFile(done) // its runtime may have finished it just before going
	if errors.Is(err, fs.ErrNotExist) {
		return errorRecord(paddock.DetailClosedBeforeExit), false, nil
	}
	return end, false, err
}

// Attach subscribes to a session: its journal from byte zero, then live
// output, or its recorded end. A session left live by a runtime that is
// gone is recovered first (its processes killed, its end recorded as
// closed_before_exit).
func (a *Adapter) Attach(_ context.Context, h paddock.Handle, sessionID string, opts paddock.AttachOpts) (paddock.Stream, error) {
	if err := paddock.ValidateAttach(a, sessionID); err != nil {
		return nil, err
	}
	if _, err := a.readMeta(h.Name); err != nil {
		return nil, err
	}
	sbDir := a.dirOf(h.Name)
	a.mu.Lock()
	s := a.sessions[sbDir+"/"+sessionID]
	a.mu.Unlock()
	if s != nil {
		return subscribe(s, s.dir, sessionID, opts.Stdin)
	}
	dir := filepath.Join(sbDir, sessionsDir, sessionID)
	rec, err := readRecord(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, paddock.ErrNotFound
	}
	if err != nil {
		return nil, unavailable("reading the session", err)
	}
	a.recover(dir, rec)
	return subscribe(nil, dir, sessionID, opts.Stdin)
}

// TerminateSession stops one session. Graceful: SIGTERM to its process
// group, up to the timeout, then SIGKILL (to its cgroup leaf too, as root);
// force: SIGKILL at once. It succeeds only once every process of the
// session is confirmed gone. A finished session keeps its result; an
// unknown one is gone (graceful) or uncertain (force).
func (a *Adapter) TerminateSession(ctx context.Context, h paddock.Handle, id string, opts paddock.TerminateOpts) error {
	opts, err := paddock.ValidateTermination(id, opts)
	if err != nil {
		return err
	}
	sbDir := a.dirOf(h.Name)
	a.mu.Lock()
	s := a.sessions[sbDir+"/"+id]
	a.mu.Unlock()
	if s != nil {
		return a.terminateLive(ctx, s, opts)
	}
	dir := filepath.Join(sbDir, sessionsDir, id)
	rec, err := readRecord(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if opts.Mode == paddock.TerminateForce {
			return paddock.ErrTerminationUnconfirmed
		}
		return nil
	}
	if err != nil {
		return &paddock.UnavailableError{Detail: paddock.DetailTerminationUnconfirmed}
	}
	if _, err := os.Stat(filepath.Join(dir, doneFile)); err == nil {
		return nil // finished: it keeps its result
	}
	a.recover(dir, rec) // its runtime is gone: kill and record
	return terminateRecord(ctx, rec, opts)
}
