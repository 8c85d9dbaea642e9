package local

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paddockhq/paddock"
)

// cleanPath is the PATH of the minimal environment commands start from;
// nothing of the host process's environment (its secrets) is passed on.
const cleanPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// environment is the minimal base environment, then cmd.Env in order (a
// later entry replaces an earlier one of the same name).
func environment(name, home string, cmd paddock.Cmd, tty bool) []string {
	term := "dumb"
	if tty {
		term = "xterm-256color"
	}
	env := []string{"PATH=" + cleanPath, "HOME=" + home, "LANG=C.UTF-8", "TERM=" + term, "PADDOCK_SANDBOX=" + name}
	for _, e := range cmd.Env {
		kv := e.Name + "=" + e.Value
		replaced := false
		for i, old := range env {
			if strings.HasPrefix(old, e.Name+"=") {
				env[i], replaced = kv, true
			}
		}
		if !replaced {
			env = append(env, kv)
		}
	}
	return env
}

// workDir resolves cmd.Dir inside the sandbox's files: "" is their root; a
// path is taken relative to it and may not climb out with "..".
func workDir(files, dir string) (string, error) {
	if dir == "" {
		return files, nil
	}
	rel, err := sandboxRelative(dir)
	if err != nil {
		return "", &paddock.InvalidError{Detail: paddock.DetailCommand + ": dir escapes the sandbox"}
	}
	return filepath.Join(files, rel), nil
}

var hostnameUnsafe = regexp.MustCompile(`[^a-z0-9-]+`)

// hostname is a valid host name derived from the sandbox name.
func hostname(name string) string {
	h := strings.Trim(hostnameUnsafe.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if h == "" {
		h = "sandbox"
	}
	return "paddock-" + h[:min(len(h), 55)]
}

// spec builds the start spec of cmd (validated) in the sandbox described
// by m.
func (a *Adapter) spec(m meta, cmd paddock.Cmd, stdin, tty bool) (startSpec, error) {
	if err := a.requireIsolation(); err != nil {
		return startSpec{}, err
	}
	files := filepath.Join(a.dirOf(m.Name), fsDir)
	dir, err := workDir(files, cmd.Dir)
	if err != nil {
		return startSpec{}, err
	}
	return startSpec{argv: cmd.Argv(), env: environment(m.Name, files, cmd, tty), dir: dir, stdin: stdin, tty: tty}, nil
}

// Spawn starts cmd as a detachable session journaled on disk and returns
// its first subscriber. With opts.Name set and a live session of that name
// in the sandbox, it attaches to that session instead.
func (a *Adapter) Spawn(_ context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts) (paddock.Stream, error) {
	if err := paddock.ValidateSpawn(a, cmd, opts); err != nil {
		return nil, err
	}
	m, err := a.readMeta(h.Name)
	if err != nil {
		return nil, err
	}
	spec, err := a.spec(m, cmd, opts.Stdin || opts.Name != "", opts.TTY)
	if err != nil {
		return nil, err
	}
	if opts.Size != nil {
		spec.size = *opts.Size
	}
	sbDir := a.dirOf(h.Name)
	if opts.Name != "" {
		unlock := a.lockName(sbDir + "/" + opts.Name)
		defer unlock()
		for _, s := range a.live(sbDir) {
			if s.rec.Name == opts.Name && !s.isDone() {
				return subscribe(s, s.dir, s.rec.ID, true)
			}
		}
	}
	s, err := a.startSession(sbDir, m, opts.Name, cmd, spec)
	if err != nil {
		return nil, err
	}
	return subscribe(s, s.dir, s.rec.ID, opts.Stdin || opts.Name != "")
}

// lockName takes the lock of one session name in one sandbox.
func (a *Adapter) lockName(key string) (unlock func()) {
	for {
		a.mu.Lock()
		if !a.creating[key] {
			a.creating[key] = true
			a.mu.Unlock()
			return func() {
				a.mu.Lock()
				delete(a.creating, key)
				a.mu.Unlock()
			}
		}
		a.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
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
		out = append(out, sess)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
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

// recover ends a session whose supervising runtime is gone: the journal
// has no terminal record and its owner process no longer runs. Whatever is
// left of its processes is killed and closed_before_exit recorded, so
// attachers get the replay and that verdict, never a made-up exit.
func (a *Adapter) recover(dir string, rec sessionRecord) {
	if _, err := os.Stat(filepath.Join(dir, doneFile)); err == nil {
		return
	}
	if sameProcess(rec.OwnerPID, rec.OwnerStart) {
		return // its runtime still runs (another adapter of this process, or another process)
	}
	marker := filepath.Join(dir, "recovering")
	f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return // someone else recovers it
	}
	f.Close()
	signalAll(rec.members(), syscall.SIGKILL)
	if err := confirmGone(context.Background(), rec, paddock.TerminateTransportAllowance); err != nil {
		a.log.Warn().Str("session", rec.ID).Msg("local: processes of a recovered session are still there")
	}
	terminal, size, err := scanJournal(filepath.Join(dir, journalFile))
	if err == nil && !terminal {
		if j, err := os.OpenFile(filepath.Join(dir, journalFile), os.O_WRONLY, 0); err == nil {
			_ = j.Truncate(size) // drop a record torn by the crash
			_, _ = j.WriteAt(errorRecord(paddock.DetailClosedBeforeExit), size)
			_ = j.Close()
		}
	}
	_ = os.WriteFile(filepath.Join(dir, doneFile), nil, 0o644)
	_ = os.Remove(marker)
	a.log.Info().Str("session", rec.ID).Msg("local: recovered a session whose runtime had gone")
}

// Exec runs cmd to completion without a journal: stdout and stderr apart
// (or merged in arrival order) under the output cap and the adapter's
// timeout limits. On the deadline, or past the cap, the command's
// processes are killed, not merely abandoned.
func (a *Adapter) Exec(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.ExecOpts) (paddock.ExecResult, error) {
	dl, out, err := paddock.StartExec(cmd, opts, a.execLimits, nil)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	m, err := a.readMeta(h.Name)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	spec, err := a.spec(m, cmd, false, false)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	proc, err := a.runIn(a.dirOf(h.Name), m, randomID("x-"), spec)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	var (
		mu       sync.Mutex
		overErr  error
		overflow = make(chan struct{})
	)
	done := proc.read(func(kind byte, p []byte) {
		defer recycle(p)
		mu.Lock()
		defer mu.Unlock()
		if overErr != nil {
			return
		}
		if overErr = out.Add(outputKind(kind), p); overErr != nil {
			close(overflow)
		}
	})
	type result struct {
		code           int
		lost, complete bool
	}
	stop := make(chan struct{})
	finished := make(chan result, 1)
	go func() {
		code, lost, complete := proc.finish(done, a.drain, stop)
		finished <- result{code, lost, complete}
	}()
	var r result
	select {
	case r = <-finished:
	case <-overflow:
		close(stop)
		<-finished
		return paddock.ExecResult{}, paddock.ErrExecOutputLimit
	case <-dl.C():
		close(stop)
		<-finished
		return paddock.ExecResult{}, dl.Err()
	case <-ctx.Done():
		close(stop)
		<-finished
		return paddock.ExecResult{}, unavailable("exec", ctx.Err())
	}
	mu.Lock()
	defer mu.Unlock() // a reader left behind by output_truncated adds nothing more
	switch {
	case overErr != nil:
		return paddock.ExecResult{}, overErr
	case !r.complete:
		return paddock.ExecResult{}, paddock.ErrOutputTruncated
	case r.lost:
		return paddock.ExecResult{}, paddock.ErrClosedBeforeExit
	case dl.Finite() && dl.Expired():
		return paddock.ExecResult{}, dl.Err()
	}
	return out.Result(r.code), nil
}

// outputKind is the event kind of an output record kind.
func outputKind(rec byte) paddock.EventKind {
	if rec == recStderr {
		return paddock.EventStderr
	}
	return paddock.EventStdout
}
