//go:build linux

package local

import (
	"encoding/binary"
	"os"

	"golang.org/x/sys/unix"
)

// writeRecord appends one record with a single writev, header and data
// without a copy.
func writeRecord(f *os.File, kind byte, data []byte) error {
	var hdr [recHeader]byte
	hdr[0] = kind
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(data)))
	iov := [][]byte{hdr[:], data}
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
