package daytonatest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// A session is one long-lived shell that the daemon feeds commands on its
// stdin, as Daytona's daemon does: each command's script is sourced in the
// session's shell itself (so cd and export carry over to the next), with
// stdout and stderr written to FIFOs whose lines are journaled with their
// markers, stdin from a FIFO the daemon holds open for an async command
// (and at EOF for a sync one); once the script returns, the shell reports
// its status, and the exit code is recorded when both FIFOs are drained. A
// script that runs exit (or exec) ends the session's shell: its command
// never gets an exit code, and the session takes no command again.

// sessionShell is a session's shell.
type sessionShell struct {
	proc    *os.Process
	scripts io.WriteCloser // the shell's stdin
	status  *bufio.Reader  // the shell's stdout: one status line per command
	dead    atomic.Bool    // it ended, or could not be fed
}

// statusPrefix starts the line the shell prints after each command.
const statusPrefix = "__daytonatest_status "

// sessionsDir is where a session's commands keep their files, as the
// daemon keeps them, under daytona's home.
const sessionsDir = home + "/.daytona/sessions"

// shellFor is the session's shell, started with its first command; the
// caller holds ss.turn.
func (s *Server) shellFor(sb *sandbox, ss *session) (*sessionShell, error) {
	ss.mu.Lock()
	sh := ss.shell
	ss.mu.Unlock()
	if sh != nil {
		return sh, nil
	}
	cmd, err := s.shell(sb, "", nil)
	if err != nil {
		return nil, err
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	// No stderr: nil is /dev/null, where a copying goroutine would make
	// Wait wait for every process that inherited it.
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s.Go(func() { _ = cmd.Wait() })
	sh = &sessionShell{proc: cmd.Process, scripts: in, status: bufio.NewReader(out)}
	ss.mu.Lock()
	ss.shell = sh
	deleted := ss.deleted
	ss.mu.Unlock()
	if deleted { // deleted while it started
		ss.killShell()
	}
	return sh, nil
}

// runInShell runs c in the session's shell and journals it, calling
// started once the command may take input; the caller holds ss.turn. A
// command whose script ends the shell never records an exit code; an
// error is a command that could not be run at all.
func (s *Server) runInShell(sb *sandbox, ss *session, c *command, async bool, started func()) error {
	sh, err := s.shellFor(sb, ss)
	if err != nil {
		return err
	}
	if sh.dead.Load() {
		return errors.New("failed to write command: write |1: broken pipe")
	}
	dir := path.Join(sessionsDir, ss.id, c.id)
	if err := sb.space.MkdirAll(dir, 0o755, daytona); err != nil {
		return err
	}
	host, err := sb.space.Path(dir)
	if err != nil {
		return err
	}
	file := func(name string) string { return host + "/" + name }
	if err := os.WriteFile(file("cmd.sh"), []byte(c.text), 0o644); err != nil {
		return err
	}
	_ = stubfs.Chown(file("cmd.sh"), daytona)
	for _, pipe := range []string{"stdout.pipe", "stderr.pipe", "input.pipe"} {
		if err := stubproc.Mkfifo(file(pipe), 0o600); err != nil {
			return err
		}
		_ = stubfs.Chown(file(pipe), daytona)
	}
	defer func() {
		for _, pipe := range []string{"stdout.pipe", "stderr.pipe", "input.pipe"} {
			_ = os.Remove(file(pipe))
		}
	}()
	stdin := "/dev/null" // a sync command's stdin is at EOF at once
	if async {
		// The daemon holds the input FIFO open, so the command reads what
		// comes and never EOF until it ends.
		in, err := os.OpenFile(file("input.pipe"), os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer in.Close()
		stdin = path.Join(dir, "input.pipe")
		c.mu.Lock()
		c.stdin = in
		c.mu.Unlock()
	}
	// The daemon's side of each output FIFO: a reader, and a writer of its
	// own held until the command's status comes (so neither open waits
	// for the shell); the reader ends once the shell, whatever the command
	// left running, and this writer have all closed it.
	var labelers sync.WaitGroup
	var keeps []*os.File
	defer func() {
		for _, k := range keeps {
			_ = k.Close()
		}
	}()
	for _, out := range []struct {
		pipe   string
		marker []byte
	}{{"stdout.pipe", stdoutMarker}, {"stderr.pipe", stderrMarker}} {
		r, err := os.OpenFile(file(out.pipe), os.O_RDONLY|stubproc.NonBlock, 0)
		if err != nil {
			return err
		}
		keep, err := os.OpenFile(file(out.pipe), os.O_WRONLY, 0)
		if err != nil {
			_ = r.Close()
			return err
		}
		keeps = append(keeps, keep)
		labelers.Add(1)
		go s.label(&labelers, c, r, out.marker)
	}
	c.mu.Lock()
	c.pgid = sh.proc.Pid
	c.mu.Unlock()
	started()
	q := func(p string) string { return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'" }
	script := fmt.Sprintf("{ . %s; } < %s > %s 2> %s\nprintf '\\n%s%s %%d\\n' \"$?\"\n",
		q(path.Join(dir, "cmd.sh")), q(stdin), q(path.Join(dir, "stdout.pipe")), q(path.Join(dir, "stderr.pipe")), statusPrefix, c.id)
	_, err = io.WriteString(sh.scripts, script)
	code, ok := 0, false
	if err == nil {
		code, ok = sh.statusOf(c.id)
	}
	if !ok {
		sh.dead.Store(true) // the shell is gone (the script ran exit or exec, or it was killed): no status
	}
	for _, k := range keeps {
		_ = k.Close()
	}
	keeps = nil
	labelers.Wait()
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.stdin = nil
	if ok && !c.noExit {
		c.exitCode = &code
	}
	c.mu.Unlock()
	return nil
}

// statusOf reads the shell's status line of command id; false when the
// shell ended first.
func (sh *sessionShell) statusOf(id string) (int, bool) {
	for {
		line, err := sh.status.ReadString('\n')
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), statusPrefix+id+" "); ok {
			code, err := strconv.Atoi(rest)
			return code, err == nil
		}
		if err != nil {
			return 0, false
		}
	}
}

// label journals the lines of one output FIFO with marker, as the
// daemon's labelers do: line by line, NUL bytes dropped, a last
// unterminated line given its newline; it ends when every writer closed.
func (s *Server) label(wg *sync.WaitGroup, c *command, f *os.File, marker []byte) {
	defer wg.Done()
	defer f.Close()
	rd := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := rd.ReadBytes('\n')
		if len(line) > 0 {
			line = bytes.ReplaceAll(line, []byte{0}, nil)
			if len(line) == 0 || line[len(line)-1] != '\n' {
				line = append(line, '\n')
			}
			c.append(marker, line)
		}
		if err != nil {
			return
		}
	}
}

// killShell kills the session's shell and everything in its group.
func (ss *session) killShell() {
	ss.mu.Lock()
	sh := ss.shell
	ss.mu.Unlock()
	if sh != nil {
		_ = stubproc.SignalGroup(sh.proc.Pid, syscall.SIGKILL)
		_ = sh.scripts.Close()
	}
}
