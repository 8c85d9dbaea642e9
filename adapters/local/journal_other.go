//go:build !linux

package local

import "os"

// writeRecords appends records with one write.
func writeRecords(f *os.File, recs []tailRecord) error {
	var b []byte
	for _, r := range recs {
		b = append(b, encodeRecord(r.diskKind, r.disk)...)
	}
	_, err := f.Write(b)
	return err
}
