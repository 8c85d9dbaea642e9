package local

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/creack/pty"
	"github.com/paddockhq/paddock/adapters/internal/drain"
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
	cmd      *exec.Cmd
	stdin    *os.File       // write end, or the PTY master; nil without stdin
	stdout   *os.File       // read end, or the PTY master
	stderr   *os.File       // read end; nil in tty mode
	held     []drain.Object // what the command's processes write to: the pipes, or the PTY's slave
	pid      int            // the process we started (the shim when isolated)
	start    uint64         // its start time, to recognise it later
	pgid     int            // its process group (== pid)
	ns       string         // its pid namespace when isolated
	isolated bool
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
	st.cmd, st.pid, st.pgid, st.isolated = cmd, cmd.Process.Pid, cmd.Process.Pid, spec.isolated
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
		if err := st.hold(tty); err != nil {
			closeAll([]*os.File{master, tty})
			return nil, nil, err
		}
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
	if err := st.hold(outR, errR); err != nil {
		closeAll(append(childEnds, outR, errR))
		return nil, nil, err
	}
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

// hold records what the command's processes will write to.
func (s *started) hold(files ...*os.File) error {
	for _, f := range files {
		o, err := drain.ObjectOf(f)
		if err != nil {
			return err
		}
		s.held = append(s.held, o)
	}
	return nil
}

// outputs are our read ends of the command's output.
func (s *started) outputs() []*os.File {
	if s.stderr == nil {
		return []*os.File{s.stdout}
	}
	return []*os.File{s.stdout, s.stderr}
}

// read starts one reader per output, passing each chunk to emit with its
// record kind (emit must not keep the slice), and returns a channel closed
// once every reader has reached the end.
func (s *started) read(emit func(kind byte, p []byte)) <-chan struct{} {
	var readers sync.WaitGroup
	for i, f := range s.outputs() {
		kind := recStdout
		if i == 1 {
			kind = recStderr
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			readAllInto(f, func(p []byte) { emit(kind, p) })
		}()
	}
	done := make(chan struct{})
	go func() { readers.Wait(); close(done) }()
	return done
}

// finish waits for the command's leader to exit (killing the command's
// tree first when stop closes), reads its output to the end under pol
// (the leftovers of the tree that still hold it are killed after the
// grace), reaps the leader and closes our ends. It returns the leader's
// wait error, and whether the output was read whole.
//
// The leader stays unreaped until its output is drained, so its pid, and
// with it the process group id that the kill names, cannot be reused by a
// stranger meanwhile.
func (s *started) finish(done <-chan struct{}, pol drain.Policy, stop <-chan struct{}) (waitErr error, complete bool) {
	exited := make(chan bool, 1)
	go func() { exited <- drain.WaitExited(s.pid) }()
	var observed bool
	select {
	case observed = <-exited:
	case <-stop:
		s.killTree()
		observed = <-exited
	}
	pol.Abort = stop // no grace for the leftovers of a command given up on
	reaped := false
	if !observed { // the exit cannot be watched without reaping here
		waitErr, reaped = s.cmd.Wait(), true
	}
	pol.KillGroup = s.killTree
	complete = drain.Drain(drain.Output{Files: s.outputs(), Held: s.held, Done: done}, pol)
	if !reaped {
		waitErr = s.cmd.Wait()
	}
	s.closeOurs()
	return waitErr, complete
}

// killTree kills the command's processes: the shim, whose exit takes its
// namespace with it, or the whole process group.
func (s *started) killTree() {
	if s.isolated {
		_ = syscall.Kill(s.pid, syscall.SIGKILL)
		return
	}
	_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
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
