//go:build linux

package stubfs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// holder is a process that made the sandbox's mount namespace, mounted
// the sandbox's home and tmp in it, and waits for its stdin to close.
type holder struct {
	cmd   *exec.Cmd
	stdin io.Closer
	done  chan struct{} // closed when it has exited
}

// startHolder starts the holder of dir's namespace and waits until its
// mounts are in place.
func startHolder(dir string) (*holder, error) {
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	// /home first: the sandbox's directory may itself be under /tmp.
	script := "mount --make-rprivate / && mount --bind " + q(filepath.Join(dir, "home")) + " /home && mount --bind " +
		q(filepath.Join(dir, "tmp")) + " /tmp && echo ready && exec cat >/dev/null"
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS, Setpgid: true}
	if os.Geteuid() != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("stubfs: making the sandbox's mount namespace: %w", err)
	}
	h := &holder{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	ready := make(chan bool, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		ready <- line == "ready\n"
		_, _ = io.Copy(io.Discard, r) // nothing more comes; it ends when the holder exits
		_ = cmd.Wait()
		close(h.done)
	}()
	if !<-ready {
		h.stop()
		return nil, errors.New("stubfs: the sandbox's mounts failed: " + strings.TrimSpace(stderr.String()))
	}
	return h, nil
}

// enter prefixes argv with nsenter into the holder's mount namespace (and
// its user namespace when not root), starting in cwd: nsenter opens cwd
// before it enters, so a directory the mounts cover stays reachable.
func (h *holder) enter(cwd string, argv []string) []string {
	pid := strconv.Itoa(h.cmd.Process.Pid)
	pre := []string{"nsenter", "--target=" + pid, "--mount", "--wd=" + cwd}
	if os.Geteuid() != 0 {
		pre = append(pre, "--user")
	}
	return append(append(pre, "--"), argv...)
}

// ended reports whether the holder has exited.
func (h *holder) ended() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// stop closes the holder's stdin and waits for it to exit.
func (h *holder) stop() {
	_ = h.stdin.Close()
	<-h.done
}

// Probe reports whether processes can get a sandbox's own /tmp and /home
// here (mount namespaces, mount and nsenter); root is a scratch directory
// it may write under.
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
	sp := NewSpace(dir, true)
	defer sp.Close()
	cmd, err := sp.Command("/", "test", "-e", "/tmp/probe")
	return err == nil && cmd.Run() == nil
}
