package local

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
)

// The adapter and a sandbox's init talk over a Unix socket pair: each
// message is a 4-byte big-endian length and a JSON body, and the
// descriptors a message carries (a command's stdio, a pidfd) travel with
// its first bytes as SCM_RIGHTS. Bytes and descriptors both arrive in
// order, so the reader keeps received descriptors in a queue and hands
// each message the number it declares.

// machineMessage is one message either way.
type machineMessage struct {
	Op string `json:"op"`
	ID string `json:"id,omitempty"`
	// start
	Argv []string `json:"argv,omitempty"`
	Env  []string `json:"env,omitempty"`
	Dir  string   `json:"dir,omitempty"`
	TTY  bool     `json:"tty,omitempty"`
	// started / exited
	PID  int `json:"pid,omitempty"`
	Code int `json:"code,omitempty"`
	// ready / failed
	Error string `json:"error,omitempty"`
	Errno int    `json:"errno,omitempty"`
	// descriptors carried
	FDs int `json:"fds,omitempty"`
}

// The operations.
const (
	opReady   = "ready"   // init → adapter: set up (or Error)
	opStart   = "start"   // adapter → init: start a command (stdin, stdout, stderr[, cgroup] attached)
	opStarted = "started" // init → adapter: it runs (its pidfd attached where there are pidfds)
	opFailed  = "failed"  // init → adapter: it could not be started
	opExited  = "exited"  // init → adapter: its leader exited with Code
	opSignal  = "signal"  // adapter → init: send signal Code to process group PID
)

// maxMachineMessage bounds one message, so a corrupt length cannot make a
// reader allocate without limit; a command larger than this is refused
// before it is sent.
const maxMachineMessage = 64 << 20

// maxMessageFDs is the most descriptors one message carries.
const maxMessageFDs = 4

// errMessageTooLarge is a message over maxMachineMessage.
var errMessageTooLarge = errors.New("message too large")

// msgConn is one end of the socket pair: the adapter's goes through Go's
// network poller; the init's is a blocking descriptor read on a thread of
// its own (the init is idle between requests, and a blocking read wakes it
// in one step).
type msgConn interface {
	recvmsg(p, oob []byte) (n, oobn int, err error)
	sendmsg(p, oob []byte) (n int, err error)
}

// unixConn is a msgConn over the network poller.
type unixConn struct{ c *net.UnixConn }

func (u unixConn) recvmsg(p, oob []byte) (int, int, error) {
	n, oobn, _, _, err := u.c.ReadMsgUnix(p, oob)
	return n, oobn, err
}

func (u unixConn) sendmsg(p, oob []byte) (int, error) {
	n, _, err := u.c.WriteMsgUnix(p, oob, nil)
	return n, err
}

// blockingConn is a msgConn over a blocking descriptor.
type blockingConn struct{ fd int }

// writeMessage sends m with fds on c. The caller serialises writers.
func writeMessage(c msgConn, m machineMessage, fds []int) error {
	m.FDs = len(fds)
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(body) > maxMachineMessage {
		return errMessageTooLarge
	}
	buf := make([]byte, 4+len(body))
	binary.BigEndian.PutUint32(buf, uint32(len(body)))
	copy(buf[4:], body)
	var oob []byte
	if len(fds) > 0 {
		oob = unixRights(fds...)
	}
	n, err := c.sendmsg(buf, oob)
	if err != nil {
		return err
	}
	for n < len(buf) { // a short write: the descriptors went with the first part
		k, err := c.sendmsg(buf[n:], nil)
		if err != nil {
			return err
		}
		n += k
	}
	return nil
}

// messageReader reads messages and the descriptors they carry.
type messageReader struct {
	c    msgConn
	buf  []byte // bytes read and not yet consumed
	fds  []int  // descriptors received and not yet handed out
	oob  []byte
	read []byte
}

func newMessageReader(c msgConn) *messageReader {
	return &messageReader{c: c, oob: make([]byte, rightsSpace(4*maxMessageFDs)), read: make([]byte, 64<<10)}
}

// next returns the next message and its descriptors as files (owned by the
// caller). io.EOF means the peer closed the socket between messages.
func (r *messageReader) next() (machineMessage, []*os.File, error) {
	for len(r.buf) < 4 {
		if err := r.fill(); err != nil {
			return machineMessage{}, nil, err
		}
	}
	n := int(binary.BigEndian.Uint32(r.buf))
	if n > maxMachineMessage {
		return machineMessage{}, nil, errMessageTooLarge
	}
	for len(r.buf) < 4+n {
		if err := r.fill(); err != nil {
			return machineMessage{}, nil, noEOF(err)
		}
	}
	var m machineMessage
	err := json.Unmarshal(r.buf[4:4+n], &m)
	r.buf = r.buf[4+n:]
	if err != nil {
		return machineMessage{}, nil, fmt.Errorf("machine message: %w", err)
	}
	if m.FDs < 0 || m.FDs > maxMessageFDs || m.FDs > len(r.fds) {
		return machineMessage{}, nil, errors.New("machine message: descriptors missing")
	}
	files := make([]*os.File, m.FDs)
	for i := range files {
		files[i] = os.NewFile(uintptr(r.fds[i]), "fd")
	}
	r.fds = r.fds[m.FDs:]
	return m, files, nil
}

// fill reads more bytes, keeping any descriptors that came with them.
func (r *messageReader) fill() error {
	n, oobn, err := r.c.recvmsg(r.read, r.oob)
	n, oobn = max(n, 0), max(oobn, 0)
	if oobn > 0 {
		r.fds = append(r.fds, parseRights(r.oob[:oobn])...)
	}
	r.buf = append(r.buf, r.read[:n]...)
	if n == 0 && err == nil {
		return io.EOF
	}
	if err != nil && n == 0 {
		return err
	}
	return nil
}

// close releases descriptors received but never handed out.
func (r *messageReader) close() {
	for _, fd := range r.fds {
		closeFD(fd)
	}
	r.fds = nil
}

// noEOF turns an end of file inside a message into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
