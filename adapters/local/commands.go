package local

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/egress"
)

// cleanPath is the PATH of the minimal environment commands start from;
// nothing of the host process's environment (its secrets) is passed on.
const cleanPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// environment is the minimal base environment (with the proxy's when the
// sandbox's egress is gated), then cmd.Env in order (a later entry
// replaces an earlier one of the same name).
func environment(name, home string, cmd paddock.Cmd, tty, gated bool) []string {
	term := "dumb"
	if tty {
		term = "xterm-256color"
	}
	env := []string{"PATH=" + cleanPath, "HOME=" + home, "LANG=C.UTF-8", "TERM=" + term, "PADDOCK_SANDBOX=" + name}
	if gated {
		env = append(env, egress.ProxyEnv...)
	}
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
	h = cmp.Or(h, "sandbox")
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
	return startSpec{argv: cmd.Argv(), env: environment(m.Name, files, cmd, tty, a.gated(m)), dir: dir, stdin: stdin, tty: tty}, nil
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
	end, size, err := scanJournal(filepath.Join(dir, journalFile))
	if err == nil && end == nil {
		end = errorRecord(paddock.DetailClosedBeforeExit)
		if j, err := os.OpenFile(filepath.Join(dir, journalFile), os.O_WRONLY, 0); err == nil {
			_ = j.Truncate(size) // drop a record torn by the crash
			_, _ = j.WriteAt(end, size)
			_ = j.Close()
		}
	}
	_ = os.WriteFile(filepath.Join(dir, doneFile), end, 0o644)
	_ = os.Remove(marker)
	a.log.Info().Str("session", rec.ID).Msg("local: recovered a session whose runtime had gone")
}
