//go:build !linux

package e2btest

import "errors"

// writeMetadata keeps no metadata: extended attributes are read and
// written here on Linux only, so a write behaves as on a filesystem
// without them.
func writeMetadata(string, map[string]string) error { return errors.ErrUnsupported }

// readMetadata finds none.
func readMetadata(string) map[string]string { return nil }
