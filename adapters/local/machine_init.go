package local

import (
	"errors"
	"fmt"
	"os"
	"strconv"
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
const initProtocol = 2 // 2: the init hands over an egress listener when asked

// initConfig is what the adapter tells a new init.
type initConfig struct {
	Protocol int    `json:"protocol"`
	Isolated bool   `json:"isolated"`
	Hostname string `json:"hostname,omitempty"`
	Loopback bool   `json:"loopback,omitempty"` // a network namespace: bring lo up
	// Egress asks for the sandbox's way out: a listener on
	// 127.0.0.1:egress.Port in its network namespace, handed to the adapter
	// with the ready message (egress.go).
	Egress bool   `json:"egress,omitempty"`
	NProc  uint64 `json:"nproc,omitempty"` // RLIMIT_NPROC, 0 = leave
	FSize  uint64 `json:"fsize,omitempty"` // RLIMIT_FSIZE, 0 = leave
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

// exitInitFailed is the init's exit code when it could not set up.
const exitInitFailed = 126

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
