//go:build linux

package local

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// namespaceFlags are the namespaces of an isolated machine; the network
// namespace is added unless the sandbox has unrestricted egress.
const namespaceFlags = syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC

// namespacesSupported is true on Linux.
const namespacesSupported = true

// initExecutable is this program's binary, still there if it was replaced
// or deleted since it started.
func initExecutable() (string, error) { return "/proc/self/exe", nil }

// initAttr is how a machine's init starts: in fresh namespaces (plus a user
// namespace mapping the caller to root inside when the caller is not root)
// when isolated, in its own process group otherwise, and in the init leaf
// of the machine's cgroup when there is one.
func initAttr(isolated, network bool, cgroup *os.File) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if isolated {
		flags := uintptr(namespaceFlags)
		if network {
			flags |= syscall.CLONE_NEWNET
		}
		attr = &syscall.SysProcAttr{Cloneflags: flags}
		if os.Geteuid() != 0 {
			attr.Cloneflags |= syscall.CLONE_NEWUSER
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
			attr.GidMappingsEnableSetgroups = false
		}
	}
	if cgroup != nil {
		attr.UseCgroupFD, attr.CgroupFD = true, int(cgroup.Fd())
	}
	return attr
}

// hostPID is the pid, in this process's namespace, of the process pidfd
// refers to (fdinfo's Pid line), or 0 once it has been reaped.
func hostPID(pidfd *os.File) int {
	if pidfd == nil {
		return 0
	}
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(int(pidfd.Fd())))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Pid:"); ok {
			pid, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || pid < 0 {
				return 0
			}
			return pid
		}
	}
	return 0
}

// members lists the machine's live processes, its init excepted: the
// members of its PID namespace when isolated, its descendants otherwise
// (it is their subreaper).
func (m *machine) members() []int {
	if !m.isolated {
		return descendantsOf(m.pid)
	}
	var out []int
	for _, pid := range namespaceMembers(pidNamespace(m.pid)) {
		if pid != m.pid {
			out = append(out, pid)
		}
	}
	return out
}

// outputPipeSize is the capacity asked for a command's output pipes (the
// default is 64 KiB): a command can run ahead of its reader by that much,
// and a reader that fell behind takes it in few, large reads.
const outputPipeSize = 1 << 20

// growPipe asks for a larger pipe; where the host refuses (a lower
// pipe-max-size, or the user's pipe budget spent) the pipe keeps its size.
func growPipe(f *os.File) {
	_, _ = unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, outputPipeSize)
}

// dialInNetwork dials addr from inside the network namespace of process
// pid (a machine's init): the socket is made on a thread that joined that
// namespace, and belongs to it for good; the thread then goes back to
// ours. A thread that cannot go back is not reused.
func dialInNetwork(ctx context.Context, pid int, addr string) (net.Conn, error) {
	target, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/net")
	if err != nil {
		return nil, err
	}
	defer target.Close()
	type result struct {
		c   net.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{err: err}
			return
		}
		defer own.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("joining the sandbox's network: %w", err)}
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		} // else the thread stays locked and ends with this goroutine
		done <- result{c, err}
	}()
	r := <-done
	return r.c, r.err
}

// recvmsgFlags makes received descriptors close-on-exec at once.
const recvmsgFlags = syscall.MSG_CMSG_CLOEXEC
