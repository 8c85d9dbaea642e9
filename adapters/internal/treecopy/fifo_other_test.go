//go:build !unix

package treecopy_test

import "errors"

// mkfifo has no FIFOs to make here.
func mkfifo(string) error { return errors.ErrUnsupported }
