//go:build linux

package local

import (
	"encoding/binary"
	"os"

	"golang.org/x/sys/unix"
)

// writeRecords appends records with writev, headers and data without a
// copy.
func writeRecords(f *os.File, recs []diskRecord) error {
	hdrs := make([]byte, recHeader*len(recs))
	iov := make([][]byte, 0, 2*len(recs))
	for i, r := range recs {
		hdr := hdrs[i*recHeader : (i+1)*recHeader]
		hdr[0] = r.kind
		binary.BigEndian.PutUint32(hdr[1:], uint32(len(r.data)))
		iov = append(iov, hdr)
		if len(r.data) > 0 {
			iov = append(iov, r.data)
		}
	}
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var werr error
	if err := raw.Write(func(fd uintptr) bool {
		for len(iov) > 0 {
			n, err := unix.Writev(int(fd), iov)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				werr = err
				return true
			}
			for n > 0 && len(iov) > 0 { // a short write: skip what went out
				if n >= len(iov[0]) {
					n -= len(iov[0])
					iov = iov[1:]
					continue
				}
				iov[0] = iov[0][n:]
				n = 0
			}
		}
		return true
	}); err != nil {
		return err
	}
	return werr
}
