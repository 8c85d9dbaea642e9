//go:build unix

package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

func runInit() int {
	// Commands inherit only their stdio: not the machine's socket, nor any
	// descriptor the program's own parent left open to it.
	syscall.CloseOnExec(initSocketFD)
	closeOnExecAbove(initSocketFD)
	if err := syscall.SetNonblock(initSocketFD, false); err != nil {
		return exitInitFailed
	}
	s := &initServer{conn: blockingConn{initSocketFD}, leaders: map[int]string{}, started: make(chan struct{}, 1)}
	var cfg initConfig
	err := json.Unmarshal([]byte(os.Getenv(initConfigEnv)), &cfg)
	s.isolated, s.commands = cfg.Isolated, cfg.Commands
	if err == nil && cfg.Protocol != initProtocol {
		err = fmt.Errorf("this init speaks protocol %d, the adapter %d: build the init program from the same Paddock version", initProtocol, cfg.Protocol)
	}
	if err == nil {
		err = setupMachine(cfg)
	}
	var handed []int // descriptors for the adapter: the egress listener
	if err == nil && cfg.Egress {
		var fd int
		if fd, err = egressListener(); err == nil {
			handed = append(handed, fd)
		}
	}
	if err != nil {
		s.send(machineMessage{Op: opReady, Error: err.Error()}, nil)
		return exitInitFailed
	}
	err = s.send(machineMessage{Op: opReady}, handed)
	for _, fd := range handed {
		_ = syscall.Close(fd)
	}
	if err != nil {
		return exitInitFailed
	}
	go s.reapChildren()
	s.serve()
	// The adapter is gone: nothing of the machine may outlive it. An
	// isolated init's exit takes its namespace with it; a subreaper kills
	// its descendants first.
	if !cfg.Isolated {
		killDescendants(func() { s.reap() })
	}
	return 0
}

// serve handles requests until the adapter closes the socket, on a thread
// of its own.
func (s *initServer) serve() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if s.commands != "" {
		// Only this thread: the runtime makes new threads for a locked
		// one from its template thread, which stays outside the limit.
		if err := os.WriteFile(s.commands, []byte(strconv.Itoa(threadID())), 0); err != nil {
			return
		}
	}
	r := newMessageReader(s.conn)
	defer r.close()
	for {
		m, files, err := r.next()
		if err != nil {
			return
		}
		switch m.Op {
		case opStart:
			s.start(m, files)
		case opSignal:
			if m.PID > 0 {
				_ = syscall.Kill(-m.PID, syscall.Signal(m.Code))
			}
		}
		for _, f := range files {
			_ = f.Close()
		}
	}
}

// start starts one command with the stdio in files (and its cgroup, when
// a fourth descriptor is there) and answers started or failed.
func (s *initServer) start(m machineMessage, files []*os.File) {
	if len(m.Argv) == 0 || len(files) < 3 {
		s.send(machineMessage{Op: opFailed, ID: m.ID, Error: "malformed start request"}, nil)
		return
	}
	file := m.Argv[0]
	if strings.Contains(file, "/") && !filepath.IsAbs(file) {
		file = filepath.Join(m.Dir, file) // relative to the command's directory, not the init's
	}
	path, err := lookPath(file, envValue(m.Env, "PATH"))
	argv, env := m.Argv, m.Env
	var nr *notRunnable
	if errors.As(err, &nr) {
		// As under a shell, the command starts, says why on stderr and
		// exits 127 or 126: this program plays it.
		path, err = "/proc/self/exe", nil
		env = []string{notRunnableEnv + "=" + strconv.Itoa(nr.Code), notRunnableMsgEnv + "=" + m.Argv[0] + ": " + nr.Reason}
	}
	if err != nil {
		s.send(machineMessage{Op: opFailed, ID: m.ID, Error: err.Error(), Errno: errnoOf(err)}, nil)
		return
	}
	cgroup := -1
	if len(files) > 3 {
		cgroup = int(files[3].Fd())
	}
	pidfd := -1
	wantPidfd := &pidfd
	if !s.isolated {
		wantPidfd = nil // the adapter numbers processes as we do
	}
	attr := &syscall.ProcAttr{
		Dir: m.Dir, Env: env, Files: []uintptr{files[0].Fd(), files[1].Fd(), files[2].Fd()},
		Sys: commandAttr(m.TTY, cgroup, wantPidfd),
	}
	s.mu.Lock() // the reaper must not see the leader before it is registered
	defer s.mu.Unlock()
	pid, err := syscall.ForkExec(path, argv, attr)
	for _, f := range files { // the command has its copies; ours would hold its output open
		_ = f.Close()
	}
	if err != nil {
		s.send(machineMessage{Op: opFailed, ID: m.ID, Error: fmt.Sprintf("start %s: %v", m.Argv[0], err), Errno: errnoOf(err)}, nil)
		return
	}
	s.leaders[pid] = m.ID
	select {
	case s.started <- struct{}{}:
	default:
	}
	var fds []int
	if pidfd >= 0 {
		fds = []int{pidfd}
		defer syscall.Close(pidfd)
	}
	// Sent before the lock is released, so "started" precedes "exited".
	s.send(machineMessage{Op: opStarted, ID: m.ID, PID: pid}, fds)
}

// reap reaps every child that has ended and reports the leaders' exits.
func (s *initServer) reap() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
		id, ok := s.leaders[pid]
		if !ok {
			continue // an orphan that was passed to us
		}
		delete(s.leaders, pid)
		code := ws.ExitStatus()
		if ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		s.send(machineMessage{Op: opExited, ID: id, Code: code}, nil)
	}
}
