//go:build !linux

package local

import "os"

// writeRecords appends records with one write.
func writeRecords(f *os.File, recs []diskRecord) error {
	var b []byte
	for _, r := range recs {
		b = append(b, encodeRecord(r.kind, r.data)...)
	}
	_, err := f.Write(b)
	return err
}
