//go:build unix

package local

import (
	"errors"
	"io"
	"syscall"
)

// readWhenReady is readAllInto for a file the runtime's poller waits on (a
// pipe): it takes a buffer only once the file has bytes to read, so a quiet
// command holds no buffer while it waits. It reports false, reading
// nothing, for any other reader.
func readWhenReady(r io.Reader, emit func(p []byte) (kept bool)) bool {
	sc, ok := r.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	for {
		var (
			buf  *[readChunk]byte
			n    int
			rerr error
		)
		err := rc.Read(func(fd uintptr) bool {
			buf = readBuffers.Get().(*[readChunk]byte)
			for {
				n, rerr = syscall.Read(int(fd), buf[:])
				if !errors.Is(rerr, syscall.EINTR) {
					break
				}
			}
			if errors.Is(rerr, syscall.EAGAIN) {
				readBuffers.Put(buf)
				buf = nil
				return false // wait until the file is readable
			}
			return true
		})
		if buf != nil && (n <= 0 || !emit(buf[:n])) {
			readBuffers.Put(buf)
		}
		if err != nil || rerr != nil || n <= 0 {
			return true
		}
	}
}
