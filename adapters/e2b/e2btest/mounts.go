package e2btest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// mountScript mounts a sandbox's /home and /tmp over this machine's, in
// the process's own mount namespace (/home first: the sandbox's directory
// may itself be under /tmp).
func mountScript(dir string) string {
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	return "mount --make-rprivate / && mount --bind " + q(filepath.Join(dir, "home")) + " /home && mount --bind " +
		q(filepath.Join(dir, "tmp")) + " /tmp && "
}

// namespace gives a process a mount namespace of its own (and, when this
// process is not root, a user namespace in which it is).
func (s *Server) namespace(attr *syscall.SysProcAttr) {
	attr.Cloneflags = syscall.CLONE_NEWNS
	if os.Geteuid() != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
}

// probeMounts reports whether processes can get the sandbox's own /tmp and
// /home here (mount namespaces, and a mount command).
func (s *Server) probeMounts() bool {
	dir, err := os.MkdirTemp(s.root, "probe-")
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
	cmd := exec.Command("/bin/sh", "-c", mountScript(dir)+"test -e /tmp/probe")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	s.namespace(cmd.SysProcAttr)
	return cmd.Run() == nil
}
