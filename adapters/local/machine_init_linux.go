//go:build linux

package local

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/egress"
	"golang.org/x/sys/unix"
)

// setupMachine prepares the init's process for its commands: the
// namespaces' mounts, host name and loopback when isolated, the subreaper
// role otherwise, and the resource limits every command inherits.
func setupMachine(cfg initConfig) error {
	_ = os.WriteFile("/proc/self/comm", []byte("paddock-init"), 0) // its name in ps, rather than "exe"
	if cfg.Isolated {
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fmt.Errorf("private mounts: %w", err)
		}
		if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("mount /proc: %w", err)
		}
		if cfg.Hostname != "" {
			if err := unix.Sethostname([]byte(cfg.Hostname)); err != nil {
				return fmt.Errorf("hostname: %w", err)
			}
		}
		if cfg.Loopback {
			if err := loopbackUp(); err != nil {
				return fmt.Errorf("loopback: %w", err)
			}
		}
	} else if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("subreaper: %w", err)
	}
	if cfg.NProc > 0 {
		if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: cfg.NProc, Max: cfg.NProc}); err != nil {
			return fmt.Errorf("process limit: %w", err)
		}
	}
	if cfg.FSize > 0 {
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: cfg.FSize, Max: cfg.FSize}); err != nil {
			return fmt.Errorf("file size limit: %w", err)
		}
	}
	return nil
}

// egressListener listens on 127.0.0.1:egress.Port in the machine's network
// namespace: the only way out its commands have, served by the adapter.
func egressListener() (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("egress listener: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err == nil {
		err = unix.Bind(fd, &unix.SockaddrInet4{Port: egress.Port, Addr: [4]byte{127, 0, 0, 1}})
		if err == nil {
			err = unix.Listen(fd, 128)
		}
		if err == nil {
			return fd, nil
		}
	}
	_ = unix.Close(fd)
	return -1, fmt.Errorf("egress listener: %w", err)
}

// loopbackUp sets IFF_UP on lo, as `ip link set lo up` does.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// commandAttr is how the init starts a command: its own process group (a
// session with the terminal as its controlling one in tty mode), killed
// if the init dies, in the cgroup leaf cgroup when there is one (>= 0),
// with a pidfd for the adapter when pidfd is not nil.
func commandAttr(tty bool, cgroup int, pidfd *int) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: !tty, Setsid: tty, Setctty: tty, Ctty: 0, Pdeathsig: syscall.SIGKILL}
	if pidfd != nil {
		attr.PidFD = pidfd
	}
	if cgroup >= 0 {
		attr.UseCgroupFD, attr.CgroupFD = true, cgroup
	}
	return attr
}

// killDescendants kills every descendant of this process (a subreaper:
// orphans of its commands are its children) until none is left, calling
// reap between passes. A process forked meanwhile is the child of one
// killed, passed to us, and found by the next pass.
func killDescendants(reap func()) {
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		pids := descendantsOf(os.Getpid())
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		reap()
		time.Sleep(delay)
	}
}

// descendantsOf lists the live descendants of pid, read from /proc.
func descendantsOf(root int) []int {
	children := map[int][]int{}
	for _, pid := range allPIDs() {
		if state, ppid, ok := procParent(pid); ok && state != 'Z' {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// procParent reads a process's state and parent from /proc/<pid>/stat.
func procParent(pid int) (state byte, ppid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 2 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return f[0][0], ppid, err == nil
}

// reapChildren waits for children to end, in a blocking wait that leaves
// them unreaped (so the leader of a command being started is registered
// before it is reaped: reap takes the start lock), and reaps them.
func (s *initServer) reapChildren() {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOWAIT, nil)
		switch err {
		case nil:
			s.reap()
		case unix.ECHILD:
			<-s.started
		case unix.EINTR:
		default:
			return
		}
	}
}

// closeOnExecAbove marks every descriptor above fd close-on-exec.
func closeOnExecAbove(fd int) {
	if unix.CloseRange(uint(fd+1), ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	entries, _ := os.ReadDir("/proc/self/fd") // before Linux 5.11
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > fd {
			syscall.CloseOnExec(n)
		}
	}
}
