package local

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/creack/pty"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/drain"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// startSpec is one command to start in a sandbox's machine.
type startSpec struct {
	argv    []string
	env     []string
	dir     string
	stdin   bool
	tty     bool
	size    paddock.TermSize // the terminal's initial size (tty only)
	session bool             // a session: its own cgroup leaf where there are cgroups, and a record
}

// started is a running command and our ends of its stdio.
type started struct {
	m      *machine
	l      *leader
	stdin  *os.File       // write end, or the PTY master; nil without stdin
	stdout *os.File       // read end, or the PTY master
	stderr *os.File       // read end; nil in tty mode
	held   []drain.Object // what the command's processes write to: the pipes, or the PTY's slave
	nsPID  int            // the leader as the machine numbers it (its process group too)
	pid    int            // the leader as this process numbers it, 0 once reaped
	start  uint64         // its start time, to recognise it later
	cgroup string         // its cgroup leaf, or ""
}

// errStart marks a command that could not be started because of its own
// argv, dir or env (the caller's fault).
var errStart = errors.New("cannot start the command")

// run starts spec in machine m as command id and returns once it runs.
func (m *machine) run(id string, spec startSpec) (*started, error) {
	st, childEnds, err := attachStdio(spec)
	if err != nil {
		return nil, err
	}
	defer closeChildEnds(childEnds)
	var leaf *os.File
	if spec.session {
		if st.cgroup, leaf, err = m.cg.newLeaf(id); err != nil {
			st.closeOurs()
			return nil, fmt.Errorf("cgroup: %w", err)
		}
		if leaf != nil {
			defer leaf.Close()
		}
	}
	reply, err := m.start(id, machineMessage{Argv: spec.argv, Env: spec.env, Dir: spec.dir, TTY: spec.tty}, childEnds, leaf)
	if err != nil {
		st.closeOurs()
		st.removeCgroup()
		return nil, err
	}
	st.m, st.l, st.nsPID, st.pid = m, reply.l, reply.pid, reply.pid
	if m.isolated {
		st.pid = hostPID(reply.pidfd)
	}
	if reply.pidfd != nil {
		_ = reply.pidfd.Close()
	}
	if spec.session && st.pid > 0 {
		st.start, _ = processStart(st.pid)
	}
	return st, nil
}

// attachStdio makes pipes (or a PTY) for a command; it returns our ends
// and the command's stdin, stdout and stderr, which the caller closes with
// closeChildEnds once the command has started.
func attachStdio(spec startSpec) (*started, []*os.File, error) {
	st := &started{}
	if spec.tty {
		master, tty, err := pty.Open()
		if err != nil {
			return nil, nil, fmt.Errorf("opening a pty: %w", err)
		}
		if err := setSize(master, spec.size); err != nil {
			closeAll([]*os.File{master, tty})
			return nil, nil, fmt.Errorf("sizing the pty: %w", err)
		}
		st.stdout, st.stdin = master, master
		if err := st.hold(tty); err != nil {
			closeAll([]*os.File{master, tty})
			return nil, nil, err
		}
		return st, []*os.File{tty, tty, tty}, nil
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
	st.stdout, st.stderr = outR, errR
	growPipe(outW)
	growPipe(errW)
	if err := st.hold(outR, errR); err != nil {
		closeAll([]*os.File{outR, outW, errR, errW})
		return nil, nil, err
	}
	if !spec.stdin {
		null, err := devNull()
		if err != nil {
			closeAll([]*os.File{outR, outW, errR, errW})
			return nil, nil, err
		}
		return st, []*os.File{null, outW, errW}, nil
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		closeAll([]*os.File{outR, outW, errR, errW})
		return nil, nil, err
	}
	st.stdin = inW
	return st, []*os.File{inR, outW, errW}, nil
}

// devNull is /dev/null, opened once: the stdin of every command started
// without one.
var devNull = sync.OnceValues(func() (*os.File, error) { return os.Open(os.DevNull) })

// closeChildEnds closes the command's ends of its stdio once the init has
// them, all but the shared /dev/null.
func closeChildEnds(fs []*os.File) {
	null, _ := devNull()
	for _, f := range fs {
		if f != nil && f != null {
			_ = f.Close()
		}
	}
}

// defaultTermSize is a terminal's size when the spawn asks for none.
var defaultTermSize = paddock.TermSize{Cols: 80, Rows: 24}

// setSize sets the terminal of master to size (the default for a zero one).
func setSize(master *os.File, size paddock.TermSize) error {
	if size.Cols == 0 || size.Rows == 0 {
		size = defaultTermSize
	}
	return stubproc.SetTerminalSize(master, uint16(size.Cols), uint16(size.Rows))
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
// record kind, and returns a channel closed once every reader has reached
// the end. A chunk is in a buffer of readBuffers, which emit keeps (it
// reports so, and gives the buffer back later) or not.
func (s *started) read(emit func(kind byte, p []byte) (kept bool)) <-chan struct{} {
	var readers sync.WaitGroup
	for i, f := range s.outputs() {
		kind := recStdout
		if i == 1 {
			kind = recStderr
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			readAllInto(f, func(p []byte) bool { return emit(kind, p) })
		}()
	}
	done := make(chan struct{})
	go func() { readers.Wait(); close(done) }()
	return done
}

// finish waits for the command's leader to exit (killing the command's
// processes first when stop closes), reads its output to the end under pol
// (the leftovers that still hold it are killed after the grace), and
// closes our ends. It returns the leader's exit code, whether the machine
// ended before reporting it (lost), and whether the output was read whole.
func (s *started) finish(done <-chan struct{}, pol drain.Policy, stop <-chan struct{}) (code int, lost, complete bool) {
	select {
	case <-s.l.exited:
	case <-stop:
		s.killTree()
		<-s.l.exited
	}
	pol.Abort = stop // no grace for the leftovers of a command given up on
	pol.KillGroup = s.killTree
	complete = drain.Drain(drain.Output{Files: s.outputs(), Held: s.held, Done: done}, pol)
	s.closeOurs()
	return s.l.code, s.l.lost, complete
}

// killTree kills the command's processes: its whole cgroup leaf where there
// is one (what left its process group included), and its process group.
func (s *started) killTree() {
	if s.cgroup != "" {
		killCgroup(s.cgroup)
	}
	s.m.signalGroup(s.nsPID, syscall.SIGKILL)
}

// signal sends sig to the command's process group.
func (s *started) signal(sig syscall.Signal) { s.m.signalGroup(s.nsPID, sig) }

// removeCgroup removes the command's cgroup leaf if it is empty (a daemon
// it left keeps it until the machine ends).
func (s *started) removeCgroup() {
	if s.cgroup != "" {
		_ = os.Remove(s.cgroup)
	}
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

// readAllInto drains r into emit, one call per read of up to readChunk
// bytes, each in a buffer of readBuffers that emit keeps (and reports so)
// or leaves to the reader.
func readAllInto(r io.Reader, emit func(p []byte) (kept bool)) {
	if readWhenReady(r, emit) {
		return
	}
	for {
		buf := readBuffers.Get().(*[readChunk]byte)
		n, err := r.Read(buf[:])
		if n == 0 || !emit(buf[:n]) {
			readBuffers.Put(buf)
		}
		if err != nil {
			return
		}
	}
}
