//go:build linux

package stubproc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// TerminalHeld reports whether any process of this machine still has open
// the terminal whose master side is master: once none has, reading the
// master ends after the last byte written to the terminal.
func TerminalHeld(master *os.File) (bool, error) {
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		return false, fmt.Errorf("terminal number: %w", err)
	}
	var terminal unix.Stat_t
	if err := unix.Stat(fmt.Sprintf("/dev/pts/%d", n), &terminal); err != nil {
		return false, fmt.Errorf("terminal: %w", err)
	}
	fds, err := filepath.Glob("/proc/[0-9]*/fd/[0-9]*")
	if err != nil {
		return false, err
	}
	for _, fd := range fds {
		var st unix.Stat_t
		// A process that exits or closes the file meanwhile no longer holds it.
		if unix.Stat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFCHR && st.Rdev == terminal.Rdev {
			return true, nil
		}
	}
	return false, nil
}

// SignalSession sends sig to every process of the session sid (a process
// started with TerminalAttr leads a session of its own; an interactive
// shell's jobs stay in it, each in a group of its own).
func SignalSession(sid int, sig syscall.Signal) error {
	return eachProcess(func(pid int, f []string) {
		if len(f) > 3 && f[3] == strconv.Itoa(sid) {
			_ = syscall.Kill(pid, sig)
		}
	})
}

// eachProcess calls f with every process of this machine and the fields of
// its /proc stat after the command's name (state, ppid, pgrp, session, ...,
// utime and stime at 11 and 12, rss at 21). A process gone meanwhile is
// left out.
func eachProcess(f func(pid int, fields []string)) error {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return err
	}
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // gone meanwhile
		}
		end := strings.LastIndexByte(string(b), ')')
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if end < 0 || err != nil {
			continue
		}
		f(pid, strings.Fields(string(b[end+1:])))
	}
	return nil
}

// TerminalUnread is how many bytes written to the terminal whose master
// side is master wait to be read from it.
func TerminalUnread(master *os.File) (int, error) {
	return unix.IoctlGetInt(int(master.Fd()), unix.TIOCINQ)
}
