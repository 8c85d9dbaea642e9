//go:build linux

package drain

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

func objectOfInfo(info os.FileInfo) (Object, error) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return Object{}, errors.New("drain: no device and inode for " + info.Name())
	}
	return Object{Dev: uint64(st.Dev), Ino: st.Ino}, nil
}

// holdersKnown is true: Holders finds the processes holding an output.
const holdersKnown = true

// heldOpen reports whether some other descriptor still writes to one of
// files: a pipe's read end (or a terminal's master) reports a hang-up once
// no writer (no slave) is left. A closed file holds nothing.
func heldOpen(files []*os.File) bool {
	for _, f := range files {
		raw, err := f.SyscallConn()
		if err != nil {
			continue
		}
		hup := true
		if err := raw.Control(func(fd uintptr) {
			fds := []unix.PollFd{{Fd: int32(fd)}}
			if n, err := unix.Poll(fds, 0); err == nil && n == 1 {
				hup = fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0
				return
			}
			hup = false // no answer: assume a writer is there
		}); err != nil {
			continue // closed meanwhile
		}
		if !hup {
			return true
		}
	}
	return false
}

// Holders lists the processes holding a descriptor of any of held, with
// the object each holds. It reads /proc; processes whose descriptors this
// process may not read are not listed. This process and its own children
// are never listed: a child between fork and exec briefly holds copies of
// every descriptor of ours (another command being started), while what a
// command leaves behind descends from its leader, never from us.
func Holders(held []Object) map[int]Object {
	want := make(map[Object]bool, len(held))
	for _, o := range held {
		want[o] = true
	}
	out := map[int]Object{}
	self := os.Getpid()
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		if o, ok := holds(pid, want); ok && !ownChild(pid, self) {
			out[pid] = o
		}
	}
	return out
}

// ownChild reports whether pid's parent is self (or pid is gone).
func ownChild(pid, self int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // gone: nothing to kill
	}
	i := bytes.LastIndexByte(b, ')') // the command name may hold spaces and parentheses
	if i < 0 || i+2 >= len(b) {
		return true
	}
	f := strings.Fields(string(b[i+2:])) // f[0] is the state, f[1] the parent
	if len(f) < 2 {
		return true
	}
	ppid, err := strconv.Atoi(f[1])
	return err != nil || ppid == self
}

// holds reports whether pid has a descriptor of one of want.
func holds(pid int, want map[Object]bool) (Object, bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return Object{}, false
	}
	for _, fd := range fds {
		var st unix.Stat_t
		if unix.Stat(dir+fd.Name(), &st) != nil {
			continue
		}
		if o := (Object{Dev: st.Dev, Ino: st.Ino}); want[o] {
			return o, true
		}
	}
	return Object{}, false
}

// KillHolder sends SIGKILL to pid if it still holds obj. It pins the
// process with a pidfd before it checks, so a pid reused meanwhile by a
// stranger is never signalled.
func KillHolder(pid int, obj Object) error {
	want := map[Object]bool{obj: true}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ENOSYS) { // before Linux 5.3: check, then kill
			if _, ok := holds(pid, want); ok && !ownChild(pid, os.Getpid()) {
				return unix.Kill(pid, unix.SIGKILL)
			}
		}
		return err
	}
	defer unix.Close(pidfd)
	if _, ok := holds(pid, want); !ok || ownChild(pid, os.Getpid()) {
		return nil
	}
	return unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0)
}

// WaitExited blocks until pid, a child of this process, has exited, and
// leaves it unreaped: until the caller reaps it, its pid (and so a process
// group it led) cannot be reused by another process. It reports false when
// it could not wait (the caller then has to reap to learn of the exit).
func WaitExited(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err == nil
		}
	}
}
