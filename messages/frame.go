package messages

import "google.golang.org/protobuf/proto"

// Frame is what every frame type (Stdout, Stderr, FileChange, Exit, Error)
// has in common: the subscription's ref and the frame's sequence number.
type Frame interface {
	proto.Message
	GetRef() string
	GetSeq() uint64
}

// Frame types implement Frame.
var (
	_ Frame = (*Stdout)(nil)
	_ Frame = (*Stderr)(nil)
	_ Frame = (*FileChange)(nil)
	_ Frame = (*Exit)(nil)
	_ Frame = (*Error)(nil)
)

// IsTerminal reports whether f ends its subscription (Exit or Error).
func IsTerminal(f Frame) bool {
	switch f.(type) {
	case *Exit, *Error:
		return true
	}
	return false
}
