package local

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/creack/pty"
)

// startSpec is one command to start.
type startSpec struct {
	argv     []string
	env      []string
	dir      string
	stdin    bool
	tty      bool
	isolated bool   // run under the init shim in fresh namespaces
	network  bool   // with a fresh network namespace (loopback only)
	hostname string // the UTS namespace's host name
	nproc    uint64
	fsize    uint64
	cgroup   string // cgroup.procs to join, or ""
}

// started is a running command and our ends of its stdio.
type started struct {
	cmd    *exec.Cmd
	stdin  *os.File // write end, or the PTY master; nil without stdin
	stdout *os.File // read end, or the PTY master
	stderr *os.File // read end; nil in tty mode
	pid    int      // the process we started (the shim when isolated)
	start  uint64   // its start time, to recognise it later
	pgid   int      // its process group (== pid)
	ns     string   // its pid namespace when isolated
}

// errStart marks a command that could not be started because of its own
// argv, dir or env (the caller's fault).
var errStart = errors.New("cannot start the command")

// startProcess starts spec and returns once the command runs (for an
// isolated command, once the shim has started it).
func startProcess(spec startSpec) (*started, error) {
	cmd := &exec.Cmd{Env: spec.env, Dir: spec.dir}
	var (
		status, statusW *os.File
		err             error
	)
	if spec.isolated {
		if cmd.Path, err = shimExecutable(); err != nil {
			return nil, fmt.Errorf("finding the shim: %w", err)
		}
		cfg, err := json.Marshal(shimConfig{
			Argv: spec.argv, Env: spec.env, Dir: spec.dir, Hostname: spec.hostname, Loopback: spec.network,
			NProc: spec.nproc, FSize: spec.fsize, Cgroup: spec.cgroup, TTY: spec.tty,
		})
		if err != nil {
			return nil, err
		}
		cmd.Args = []string{"paddock-init"}
		// GORACE: a program built with -race would otherwise sleep a second
		// at every shim exit. The command itself gets spec.env only.
		cmd.Env = []string{shimEnv + "=1", shimConfigEnv + "=" + string(cfg), "GORACE=atexit_sleep_ms=0"}
		if status, statusW, err = os.Pipe(); err != nil {
			return nil, err
		}
		defer status.Close()
		cmd.ExtraFiles = []*os.File{statusW}
		cmd.SysProcAttr = nsAttr(spec.network)
	} else {
		if cmd.Path, err = lookPath(spec.argv[0], envValue(spec.env, "PATH")); err != nil {
			return nil, fmt.Errorf("%w: %w", errStart, err)
		}
		cmd.Args = spec.argv
		cmd.SysProcAttr = plainAttr()
	}
	st, childEnds, err := attachStdio(cmd, spec)
	if err != nil {
		if statusW != nil {
			statusW.Close()
		}
		return nil, err
	}
	err = cmd.Start()
	closeAll(childEnds)
	if statusW != nil {
		statusW.Close()
	}
	if err != nil {
		st.closeOurs()
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("%w: %w", errStart, err)
		}
		return nil, err
	}
	st.cmd, st.pid, st.pgid = cmd, cmd.Process.Pid, cmd.Process.Pid
	st.start, _ = processStart(st.pid)
	if spec.isolated {
		if err := readShimStatus(status); err != nil {
			_ = cmd.Wait()
			st.closeOurs()
			return nil, err
		}
		st.ns = pidNamespace(st.pid)
	}
	return st, nil
}

// readShimStatus waits for the shim's one report.
func readShimStatus(status *os.File) error {
	line, err := bufio.NewReader(status).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return errors.New("the isolation shim ended before starting the command")
	}
	var st shimStatus
	if err := json.Unmarshal(line, &st); err != nil {
		return fmt.Errorf("isolation shim: %w", err)
	}
	if st.Error != "" {
		return fmt.Errorf("%w: %s", errStart, st.Error)
	}
	return nil
}

// attachStdio wires pipes (or a PTY) to cmd; it returns our ends and the
// child's, which the caller closes once the child has started.
func attachStdio(cmd *exec.Cmd, spec startSpec) (*started, []*os.File, error) {
	st := &started{}
	if spec.tty {
		master, tty, err := pty.Open()
		if err != nil {
			return nil, nil, fmt.Errorf("opening a pty: %w", err)
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
		attr := cmd.SysProcAttr
		attr.Setpgid, attr.Setsid, attr.Setctty, attr.Ctty = false, true, true, 0
		st.stdout, st.stdin = master, master
		return st, []*os.File{tty}, nil
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll([]*os.File{outR, outW})
		return nil, nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	st.stdout, st.stderr = outR, errR
	childEnds := []*os.File{outW, errW}
	if spec.stdin {
		inR, inW, err := os.Pipe()
		if err != nil {
			closeAll(append(childEnds, outR, errR))
			return nil, nil, err
		}
		cmd.Stdin = inR
		st.stdin = inW
		childEnds = append(childEnds, inR)
	}
	if cmd.SysProcAttr != nil {
		cmd.SysProcAttr.Setpgid = true
	}
	return st, childEnds, nil
}

// closeOurs closes our ends.
func (s *started) closeOurs() {
	closeAll([]*os.File{s.stdin, s.stdout, s.stderr})
}

func closeAll(fs []*os.File) {
	seen := map[*os.File]bool{}
	for _, f := range fs {
		if f != nil && !seen[f] {
			seen[f] = true
			_ = f.Close()
		}
	}
}

// exitCode turns a wait result into the command's exit code: the code it
// exited with, or 128+n when signal n killed it.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// readAllInto drains r into emit, one call per read of up to readChunk
// bytes. emit must not keep p: the buffer is reused.
func readAllInto(r io.Reader, emit func(p []byte)) {
	buf := make([]byte, readChunk)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			emit(buf[:n])
		}
		if err != nil {
			return
		}
	}
}
