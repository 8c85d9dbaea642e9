//go:build !linux

package remote_test

import "errors"

// limitFiles is refused where there is no limit of open files to set.
func limitFiles(uint64) error { return errors.New("no limit of open files on this platform") }
