//go:build !linux

package remote_test

import "errors"

// limitFiles is refused off Linux: the one test that asks for it reads
// /proc, which only Linux has.
func limitFiles(uint64) error { return errors.New("no limit of open files on this platform") }
