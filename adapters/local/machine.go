package local

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/egress"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

// A machine is the init (machine_init.go) of one sandbox, started by this
// adapter on the sandbox's first command and kept until the sandbox is
// destroyed or the adapter closes; every command of the sandbox is its
// child. Only this adapter talks to it: another runtime running commands
// in the same sandbox at the same time has its own machine.
type machine struct {
	key      string // the sandbox directory
	isolated bool
	cmd      *exec.Cmd
	pid      int
	conn     *net.UnixConn
	cg       *machineCgroup // nil without cgroups
	egress   net.Listener   // the sandbox's way out, in its network namespace (egress.go); nil = none
	gate     *egress.Gate   // what serves egress, under the policy lock

	wmu sync.Mutex // one writer at a time

	mu      sync.Mutex
	pending map[string]chan startReply
	leaders map[string]*leader
	ended   bool
	done    chan struct{} // closed once the reader has stopped: the init is gone or going
}

// startReply is the init's answer to a start.
type startReply struct {
	pid   int      // in the machine's PID namespace
	pidfd *os.File // nil where there are no pidfds
	l     *leader
	err   error
}

// leader is a command's first process, as the init reports it.
type leader struct {
	exited chan struct{} // closed on its exit, or when the machine ended first
	code   int
	lost   bool // the machine ended before reporting the exit
}

// errMachineGone is a machine whose init has ended.
var errMachineGone = errors.New("the sandbox's init has ended")

// read dispatches the init's messages until its socket closes; then every
// start waiting and every leader not yet reported ends as lost.
func (m *machine) read(r *messageReader) {
	defer close(m.done)
	defer r.close()
	for {
		msg, files, err := r.next()
		if err != nil {
			break
		}
		m.dispatch(msg, files)
	}
	// The init is gone (or going): with cgroups, nothing it started may
	// outlive it, even if it died without cleaning up.
	m.cg.kill()
	m.mu.Lock()
	m.ended = true
	for id, ch := range m.pending {
		ch <- startReply{err: errMachineGone}
		delete(m.pending, id)
	}
	for id, l := range m.leaders {
		l.lost = true
		close(l.exited)
		delete(m.leaders, id)
	}
	m.mu.Unlock()
}

// dispatch handles one message from the init.
func (m *machine) dispatch(msg machineMessage, files []*os.File) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch msg.Op {
	case opStarted, opFailed:
		ch := m.pending[msg.ID]
		delete(m.pending, msg.ID)
		if ch == nil {
			closeAll(files)
			return
		}
		if msg.Op == opFailed {
			closeAll(files)
			ch <- startReply{err: startFailure(msg)}
			return
		}
		l := &leader{exited: make(chan struct{})}
		m.leaders[msg.ID] = l
		var pidfd *os.File
		if len(files) > 0 {
			pidfd = files[0]
			closeAll(files[1:])
		}
		ch <- startReply{pid: msg.PID, pidfd: pidfd, l: l}
	case opExited:
		closeAll(files)
		if l := m.leaders[msg.ID]; l != nil {
			l.code = msg.Code
			close(l.exited)
			delete(m.leaders, msg.ID)
		}
	default:
		closeAll(files)
	}
}

// startFailure maps the init's failed answer: a resource the host ran out
// of is transient; anything else is the command's own fault.
func startFailure(msg machineMessage) error {
	switch syscall.Errno(msg.Errno) {
	case syscall.EAGAIN, syscall.ENOMEM, syscall.ENFILE, syscall.EMFILE:
		return errors.New(msg.Error)
	}
	return fmt.Errorf("%w: %s", errStart, msg.Error)
}

// start asks the init to start a command with the given stdio (and cgroup
// leaf) and returns its leader. It closes stdio once the request is sent.
func (m *machine) start(id string, req machineMessage, stdio []*os.File, cgroup *os.File) (startReply, error) {
	ch := make(chan startReply, 1)
	m.mu.Lock()
	if m.ended {
		m.mu.Unlock()
		return startReply{}, errMachineGone
	}
	m.pending[id] = ch
	m.mu.Unlock()
	req.Op, req.ID = opStart, id
	fds := make([]int, 0, 4)
	for _, f := range stdio {
		fds = append(fds, int(f.Fd()))
	}
	if cgroup != nil {
		fds = append(fds, int(cgroup.Fd()))
	}
	err := m.send(req, fds)
	// The init holds its own references from here on (in flight in the
	// socket, then received), so ours go at once: a command's output ends
	// when its last writer closes, and a copy kept here until the reply
	// arrived held it open for as long as this goroutine waited to run.
	closeChildEnds(stdio)
	if err != nil {
		m.mu.Lock()
		delete(m.pending, id)
		m.mu.Unlock()
		if errors.Is(err, errMessageTooLarge) {
			return startReply{}, fmt.Errorf("%w: the command is too large", errStart)
		}
		return startReply{}, err
	}
	reply := <-ch
	return reply, reply.err
}

// send writes one message to the init.
func (m *machine) send(msg machineMessage, fds []int) error {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	return writeMessage(unixConn{m.conn}, msg, fds)
}

// signalGroup sends sig to process group pgid as the machine numbers it.
func (m *machine) signalGroup(pgid int, sig syscall.Signal) {
	if pgid <= 0 {
		return
	}
	if !m.isolated { // the same numbers as ours
		_ = stubproc.Signal(-pgid, sig)
		return
	}
	_ = m.send(machineMessage{Op: opSignal, PID: pgid, Code: int(sig)}, nil)
}

// close ends the machine: the init kills every process of it (an isolated
// init's exit takes its namespace along) and exits; close waits for that
// and for the reader, then removes the machine's cgroups.
func (m *machine) close() {
	m.shutdown()
	<-m.done
}

// initExitWait is how long an init may take to kill its processes and
// exit once its socket is closed, before it is killed.
const initExitWait = 10 * time.Second

// shutdown closes the socket, waits for the init to exit, and removes the
// cgroups; it does not wait for the reader (which may not have started).
func (m *machine) shutdown() {
	_ = m.conn.Close()
	m.cg.kill()
	exited := make(chan struct{})
	go func() { _ = m.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(initExitWait):
		_ = m.cmd.Process.Kill()
		<-exited
	}
	m.cg.remove()
}
