//go:build linux

package local

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// The init shim. A command isolated in fresh namespaces needs a PID 1 that
// makes the mounts private, mounts /proc for its PID namespace, brings the
// loopback interface up, names the host, joins the process-limit cgroup,
// applies the resource limits, starts the command, forwards signals to it
// (a namespace's PID 1 ignores SIGTERM it has no handler for), reaps
// orphans, and exits with the command's status; when it exits the kernel
// kills everything left in the namespace. That code must run inside the
// namespaces before the command, so the adapter re-executes its own binary
// with shimEnv set, and this init turns such a process into the shim before
// any other code of the program runs. Without shimEnv it does nothing.

func init() {
	if os.Getenv(shimEnv) == "1" {
		os.Exit(runShim())
	}
}

func runShim() int {
	syscall.CloseOnExec(shimStatusFD)
	status := os.NewFile(shimStatusFD, "status")
	report := func(err error) {
		st := shimStatus{}
		if err != nil {
			st.Error = err.Error()
		}
		_ = json.NewEncoder(status).Encode(st)
		_ = status.Close()
	}
	var cfg shimConfig
	if err := json.Unmarshal([]byte(os.Getenv(shimConfigEnv)), &cfg); err != nil {
		report(fmt.Errorf("shim config: %w", err))
		return exitShimFailed
	}
	if err := setupNamespace(cfg); err != nil {
		report(err)
		return exitShimFailed
	}
	path, err := lookPath(cfg.Argv[0], envValue(cfg.Env, "PATH"))
	if err != nil {
		report(err)
		return exitShimFailed
	}
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, forwardedSignals...)
	cmd := exec.Cmd{Path: path, Args: cfg.Argv, Env: cfg.Env, Dir: cfg.Dir,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Foreground: cfg.TTY, Ctty: 0}}
	if err := cmd.Start(); err != nil {
		report(fmt.Errorf("start %s: %w", cfg.Argv[0], err))
		return exitShimFailed
	}
	report(nil)
	child := cmd.Process.Pid
	go func() {
		for sig := range signals {
			_ = syscall.Kill(-child, sig.(syscall.Signal))
		}
	}()
	return reapUntil(child)
}

// forwardedSignals are passed on to the command's process group.
var forwardedSignals = []os.Signal{
	syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH, syscall.SIGCONT,
}

// reapUntil reaps every child (PID 1 inherits orphans) until the command
// itself ends, and returns its status as an exit code (128+n for signal n).
func reapUntil(child int) int {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return exitShimFailed
		}
		if pid != child {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// setupNamespace prepares the fresh namespaces for the command.
func setupNamespace(cfg shimConfig) error {
	if cfg.Cgroup != "" {
		if err := os.WriteFile(cfg.Cgroup, []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
			return fmt.Errorf("join cgroup: %w", err)
		}
	}
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
