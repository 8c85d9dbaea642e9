//go:build !linux

package local

import "os"

// writeRecord appends one record with a single write.
func writeRecord(f *os.File, kind byte, data []byte) error {
	_, err := f.Write(encodeRecord(kind, data))
	return err
}
