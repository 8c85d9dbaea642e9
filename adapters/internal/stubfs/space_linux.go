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
// this machine's directories into the sandbox's root, changed its root to
// it, and waits for its stdin to close.
type holder struct {
	cmd   *exec.Cmd
	stdin io.Closer
	done  chan struct{} // closed when it has exited
}

// quote is s as one word of a shell script.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// holderScript mounts the space's view under its root and becomes the
// holder, changed into the root.
func holderScript(cfg Config) string {
	root := func(d string) string { return quote(filepath.Join(cfg.Root, d)) }
	var b strings.Builder
	b.WriteString("set -e\nmount --make-rprivate /\n")
	for _, d := range systemDirs {
		if info, err := os.Lstat("/" + d); err == nil && info.IsDir() {
			fmt.Fprintf(&b, "mount --bind -o ro /%s %s\n", d, root(d))
		}
	}
	for _, f := range []string{"passwd", "group"} {
		fmt.Fprintf(&b, "mount --bind %s %s\n", quote(filepath.Join(cfg.Scratch, f)), root(filepath.Join("etc", f)))
	}
	for _, d := range mounts {
		if info, err := os.Lstat("/" + d); err == nil && info.IsDir() {
			bind := "--bind" // one mount each: a namespace costs the kernel time per mount
			if d == "dev" {
				bind = "--rbind" // with /dev/pts and /dev/shm
			}
			fmt.Fprintf(&b, "mount %s /%s %s\n", bind, d, root(d))
		}
	}
	for _, bind := range cfg.Binds {
		fmt.Fprintf(&b, "mount --bind %s %s\n", quote(bind.Host), root(filepath.Clean("/"+bind.At)))
	}
	// ready only once changed into the root: a command enters the
	// holder's root as it is when the command starts.
	fmt.Fprintf(&b, "exec chroot %s /bin/sh -c 'echo ready && exec cat >/dev/null'\n", quote(cfg.Root))
	return b.String()
}

// startHolder starts the holder of the space's namespace and waits until
// its mounts are in place.
func startHolder(cfg Config) (*holder, error) {
	cmd := exec.Command("/bin/sh", "-c", holderScript(cfg))
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

// root is where this machine reaches the holder's root: the sandbox's "/"
// with the namespace's mounts.
func (h *holder) root() string { return "/proc/" + strconv.Itoa(h.cmd.Process.Pid) + "/root" }

// enter prefixes argv with nsenter into the holder's mount namespace (and
// its user namespace when not root) and root, as user where the server
// may change users (root).
func (h *holder) enter(user User, argv []string) []string {
	pre := []string{"nsenter", "--target=" + strconv.Itoa(h.cmd.Process.Pid), "--mount", "--root", "--wd"}
	if os.Geteuid() != 0 {
		pre = append(pre, "--user")
	} else {
		pre = append(pre, "--setuid="+strconv.Itoa(user.UID), "--setgid="+strconv.Itoa(user.GID))
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

// Probe reports whether a sandbox's processes can see its own files here
// (mount namespaces, mount, chroot and nsenter); scratch is a directory
// it may write under.
func Probe(scratch string) bool {
	dir, err := os.MkdirTemp(scratch, "probe-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(dir)
	sp, err := NewSpace(Config{Root: filepath.Join(dir, "root"), Scratch: filepath.Join(dir, "scratch"),
		Users: []User{{Name: "root", Home: "/root"}}, Mapped: true})
	if err != nil {
		return false
	}
	defer sp.Close()
	if err := os.WriteFile(filepath.Join(dir, "root", "tmp", "probe"), nil, 0o644); err != nil {
		return false
	}
	cmd, err := sp.Command("/", User{Name: "root", Home: "/root"}, "test", "-e", "/tmp/probe")
	return err == nil && cmd.Run() == nil
}
