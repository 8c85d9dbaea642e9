//go:build !linux

package drain

import (
	"errors"
	"os"
)

// Off Linux the holders of a pipe cannot be listed and a hang-up is not
// asked for: after the grace the command's group is killed, and the
// output is read until its end or the limit.

func objectOfInfo(os.FileInfo) (Object, error) { return Object{}, nil }

func heldOpen([]*os.File) bool { return true }

// holdersKnown is false: no holder is ever seen here, so Limit bounds the
// wait, not Unseen.
const holdersKnown = false

// Holders lists nobody here.
func Holders([]Object) map[int]Object { return nil }

// KillHolder cannot check what a process holds here.
func KillHolder(int, Object) error { return errors.New("drain: holders are only known on Linux") }

// WaitExited cannot wait without reaping here: the caller reaps first.
func WaitExited(int) bool { return false }
