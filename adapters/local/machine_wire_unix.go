//go:build unix

package local

import (
	"io"
	"syscall"
)

func (b blockingConn) recvmsg(p, oob []byte) (int, int, error) {
	for {
		n, oobn, _, _, err := syscall.Recvmsg(b.fd, p, oob, recvmsgFlags)
		if err == syscall.EINTR {
			continue
		}
		if err == nil && n == 0 {
			return 0, oobn, io.EOF
		}
		return n, oobn, err
	}
}

func (b blockingConn) sendmsg(p, oob []byte) (int, error) {
	for {
		n, err := syscall.SendmsgN(b.fd, p, oob, nil, 0)
		if err == syscall.EINTR {
			continue
		}
		return n, err
	}
}

// unixRights is the control message carrying fds.
func unixRights(fds ...int) []byte { return syscall.UnixRights(fds...) }

// rightsSpace is the room a control message of n descriptors needs.
func rightsSpace(n int) int { return syscall.CmsgSpace(4 * n) }

// parseRights is the descriptors the control messages in oob carry.
func parseRights(oob []byte) []int {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var out []int
	for _, cm := range msgs {
		if fds, err := syscall.ParseUnixRights(&cm); err == nil {
			out = append(out, fds...)
		}
	}
	return out
}

// closeFD closes a descriptor received and never handed out.
func closeFD(fd int) { _ = syscall.Close(fd) }
