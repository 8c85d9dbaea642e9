//go:build windows

package local

import (
	"errors"
)

// The adapter needs a Unix system: process groups, signals, and passing
// descriptors over a socket to a sandbox's init. On Windows New refuses
// with not_supported, and what follows only lets the package build.

// unsupportedSystem is why the adapter cannot run here.
const unsupportedSystem = "the local adapter needs a Unix system (process groups, signals, descriptor passing)"

// errSystem is unsupportedSystem as an error.
var errSystem = errors.New(unsupportedSystem)

func startMachine(string, string, initConfig, *machineCgroup) (*machine, error) {
	return nil, errSystem
}

func runInit() int { return exitInitFailed }

func (blockingConn) recvmsg([]byte, []byte) (int, int, error) { return 0, 0, errSystem }
func (blockingConn) sendmsg([]byte, []byte) (int, error)      { return 0, errSystem }

func unixRights(...int) []byte { return nil }
func rightsSpace(int) int      { return 0 }
func parseRights([]byte) []int { return nil }
func closeFD(int)              {}
