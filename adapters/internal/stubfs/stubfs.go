// Package stubfs is what the loopback provider servers (e2btest,
// daytonatest) share to give a sandbox's processes a filesystem of their
// own: the sandbox's directory holds its home and tmp, and where mount
// namespaces work each process sees them at /home and /tmp.
package stubfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// MountScript is a shell prefix that mounts a sandbox's /home and /tmp
// (dir/home, dir/tmp) over this machine's, in the process's own mount
// namespace (/home first: the sandbox's directory may itself be under
// /tmp). The command follows it.
func MountScript(dir string) string {
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	return "mount --make-rprivate / && mount --bind " + q(filepath.Join(dir, "home")) + " /home && mount --bind " +
		q(filepath.Join(dir, "tmp")) + " /tmp && "
}

// Namespace gives a process a mount namespace of its own (and, when this
// process is not root, a user namespace in which it is).
func Namespace(attr *syscall.SysProcAttr) {
	attr.Cloneflags |= syscall.CLONE_NEWNS
	if os.Geteuid() != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
}

// Probe reports whether processes can get a sandbox's own /tmp and /home
// here (mount namespaces, and a mount command); root is a scratch
// directory it may write under.
func Probe(root string) bool {
	dir, err := os.MkdirTemp(root, "probe-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(dir)
	for _, d := range []string{"tmp", "home"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return false
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "tmp", "probe"), nil, 0o644); err != nil {
		return false
	}
	cmd := exec.Command("/bin/sh", "-c", MountScript(dir)+"test -e /tmp/probe")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	Namespace(cmd.SysProcAttr)
	return cmd.Run() == nil
}
