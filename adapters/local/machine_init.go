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
	"sync"
	"syscall"
)

// The init of a sandbox's machine. Every command of a sandbox is started by
// one long-lived process, the sandbox's init, so they all share what the
// init has: when isolated, its mount, PID, network, UTS and IPC namespaces
// (it is their PID 1); otherwise it is a child subreaper, so what a command
// leaves behind (a setsid daemon, a double fork) stays its descendant.
// The init is this program's own binary, re-executed with initEnv set; the
// package's init function turns such a process into the sandbox's init
// before any other code of the program runs. Without initEnv it does
// nothing.
//
// The init starts commands one at a time on the adapter's request (a child
// between fork and exec holds copies of the init's descriptors, so they are
// never another command's), reaps every child, reports each command
// leader's exit, signals process groups on request, and when the adapter's
// socket closes (the adapter destroyed the sandbox, closed, or died) it
// kills every process of the machine and exits.

const (
	initEnv       = "PADDOCK_LOCAL_INIT"
	initConfigEnv = "PADDOCK_LOCAL_INIT_CONFIG"
	initSocketFD  = 3
)

// initProtocol numbers the messages an adapter and its init exchange; an
// init refuses an adapter that speaks another (an init program of another
// version).
const initProtocol = 1

// initConfig is what the adapter tells a new init.
type initConfig struct {
	Protocol int    `json:"protocol"`
	Isolated bool   `json:"isolated"`
	Hostname string `json:"hostname,omitempty"`
	Loopback bool   `json:"loopback,omitempty"` // a network namespace: bring lo up
	NProc    uint64 `json:"nproc,omitempty"`    // RLIMIT_NPROC, 0 = leave
	FSize    uint64 `json:"fsize,omitempty"`    // RLIMIT_FSIZE, 0 = leave
	// Commands is the tasks file of the commands' pids cgroup (cgroup v1):
	// the thread that starts commands joins it, so each command is under
	// the limit from its fork while the init's other threads keep the
	// headroom; "" = none.
	Commands string `json:"commands,omitempty"`
}

// notRunnableEnv makes this program a command that could not run: it
// prints notRunnableMsgEnv on stderr and exits with the code it holds
// (127 or 126), as a shell's child would.
const (
	notRunnableEnv    = "PADDOCK_LOCAL_NOT_RUNNABLE"
	notRunnableMsgEnv = "PADDOCK_LOCAL_NOT_RUNNABLE_MSG"
)

func init() {
	if os.Getenv(initEnv) == "1" {
		os.Exit(runInit())
	}
	if code, err := strconv.Atoi(os.Getenv(notRunnableEnv)); err == nil {
		fmt.Fprintln(os.Stderr, os.Getenv(notRunnableMsgEnv))
		os.Exit(code)
	}
}

// initServer is the running init.
type initServer struct {
	conn     blockingConn
	wmu      sync.Mutex // one writer at a time
	mu       sync.Mutex // held while starting a command and while reaping
	leaders  map[int]string
	started  chan struct{} // a command was started (there is a child to wait for)
	isolated bool
	commands string // the cgroup.procs commands join, or ""
}

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
	if err != nil {
		s.send(machineMessage{Op: opReady, Error: err.Error()}, nil)
		return exitInitFailed
	}
	if err := s.send(machineMessage{Op: opReady}, nil); err != nil {
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

// exitInitFailed is the init's exit code when it could not set up.
const exitInitFailed = 126

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

// send writes one message; a closed socket is ignored (the init is ending).
func (s *initServer) send(m machineMessage, fds []int) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return writeMessage(s.conn, m, fds)
}

// errnoOf is the errno behind err, or 0.
func errnoOf(err error) int {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return int(errno)
	}
	return 0
}

// envValue returns the last value of key in an environment list.
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if len(kv) > len(key) && kv[:len(key)] == key && kv[len(key)] == '=' {
			v = kv[len(key)+1:]
		}
	}
	return v
}
