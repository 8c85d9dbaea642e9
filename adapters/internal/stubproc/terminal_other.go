//go:build !linux

package stubproc

import (
	"os"
	"syscall"
)

// TerminalHeld reports whether any process of this machine still has open
// the terminal whose master side is master. Where the system does not say,
// it answers false: the caller reads the master to its end.
func TerminalHeld(*os.File) (bool, error) { return false, nil }

// SignalSession sends sig to the session sid's leading group, which is as
// much of the session as the system lets us find.
func SignalSession(sid int, sig syscall.Signal) error { return SignalGroup(sid, sig) }

// TerminalUnread is how many bytes wait to be read from the terminal's
// master side; where the system does not say, 0.
func TerminalUnread(*os.File) (int, error) { return 0, nil }
