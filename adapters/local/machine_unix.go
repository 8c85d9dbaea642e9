//go:build unix

package local

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
)

// startMachine starts the init of a sandbox, the program at path ("" =
// this program), and waits until it is ready.
func startMachine(key, path string, cfg initConfig, cg *machineCgroup) (*machine, error) {
	syscall.ForkLock.RLock() // no fork may inherit the pair before it is close-on-exec
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, err
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "machine"), os.NewFile(uintptr(fds[1]), "machine-init")
	defer theirs.Close()
	c, err := net.FileConn(ours)
	_ = ours.Close()
	if err != nil {
		return nil, err
	}
	conn := c.(*net.UnixConn)
	if path == "" {
		if path, err = initExecutable(); err != nil {
			conn.Close()
			return nil, fmt.Errorf("finding the init: %w", err)
		}
	}
	cfg.Protocol = cmp.Or(cfg.Protocol, initProtocol)
	body, err := json.Marshal(cfg)
	if err != nil {
		conn.Close()
		return nil, err
	}
	cgroupDir, err := cg.initDir()
	if err != nil {
		conn.Close()
		return nil, err
	}
	if cgroupDir != nil {
		defer cgroupDir.Close()
	}
	cmd := &exec.Cmd{
		Path: path, Args: []string{"paddock-init"}, Dir: "/",
		// GORACE: a program built with -race would otherwise sleep a
		// second when the init exits.
		Env:         []string{initEnv + "=1", initConfigEnv + "=" + string(body), "GORACE=atexit_sleep_ms=0"},
		ExtraFiles:  []*os.File{theirs},
		SysProcAttr: initAttr(cfg.Isolated, cfg.Loopback, cgroupDir),
	}
	if err := cmd.Start(); err != nil {
		conn.Close()
		return nil, err
	}
	m := &machine{
		key: key, isolated: cfg.Isolated, cmd: cmd, pid: cmd.Process.Pid, conn: conn, cg: cg,
		pending: map[string]chan startReply{}, leaders: map[string]*leader{}, done: make(chan struct{}),
	}
	if err := cg.joinPids(m.pid); err != nil {
		m.shutdown()
		return nil, fmt.Errorf("process limit: %w", err)
	}
	r := newMessageReader(unixConn{conn})
	ready, files, err := r.next()
	if err == nil && ready.Error == "" && cfg.Egress {
		if len(files) == 1 {
			m.egress, err = net.FileListener(files[0])
		} else {
			err = fmt.Errorf("the sandbox's init handed %d descriptors for its egress, not 1", len(files))
		}
	}
	closeAll(files)
	switch {
	case err != nil:
		m.shutdown()
		return nil, errors.New("the sandbox's init ended before it was ready")
	case ready.Op != opReady:
		m.shutdown()
		return nil, fmt.Errorf("the sandbox's init answered %q", ready.Op)
	case ready.Error != "":
		m.shutdown()
		return nil, fmt.Errorf("the sandbox's init: %s", ready.Error)
	}
	go m.read(r)
	return m, nil
}
