package paddock

import "context"

// Signal names a signal sent to a live command
// (docs/contract.md#op-signal).
type Signal string

// The signals every adapter offering CapSignal delivers.
const (
	SignalInt  Signal = "INT"
	SignalTerm Signal = "TERM"
	SignalHup  Signal = "HUP"
	SignalKill Signal = "KILL"
	SignalQuit Signal = "QUIT"
	SignalUsr1 Signal = "USR1"
	SignalUsr2 Signal = "USR2"
)

// Validate answers an *InvalidError with detail signal for a name outside
// the set above.
func (s Signal) Validate() error {
	switch s {
	case SignalInt, SignalTerm, SignalHup, SignalKill, SignalQuit, SignalUsr1, SignalUsr2:
		return nil
	}
	return &InvalidError{Detail: DetailSignal + ": " + string(s) + " is not one of INT, TERM, HUP, KILL, QUIT, USR1, USR2"}
}

// Deliverable is how a stream's Signal starts: s validated, then
// command_exited for a command that has ended.
func (s Signal) Deliverable(ended bool) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if ended {
		return ErrCommandExited
	}
	return nil
}

// TermSize is a terminal's size in character cells.
type TermSize struct {
	Cols int `json:"cols"`
	Rows int `json:"rows"`
}

// MaxTermSide bounds a terminal's columns and rows.
const MaxTermSide = 1000

// Validate answers an *InvalidError with detail term_size unless both sides
// are in 1..MaxTermSide.
func (s TermSize) Validate() error {
	if s.Cols < 1 || s.Rows < 1 || s.Cols > MaxTermSide || s.Rows > MaxTermSide {
		return &InvalidError{Detail: DetailTermSize + ": columns and rows must be in 1..1000"}
	}
	return nil
}

// Signaller is implemented by the streams of adapters offering CapSignal.
type Signaller interface {
	// Signal delivers sig to the live command (its process group) without
	// ending the subscription: the exit that follows, if any, is the
	// command's own. After the command exited it is ErrCommandExited.
	Signal(ctx context.Context, sig Signal) error
}

// Resizer is implemented by the TTY streams of adapters offering
// CapResize.
type Resizer interface {
	// Resize sets the terminal's size; the command sees it (SIGWINCH).
	Resize(ctx context.Context, size TermSize) error
}

// SignalCommand validates sig and delivers it through st when a advertises
// CapSignal and st has the method; otherwise ErrNotSupported.
func SignalCommand(ctx context.Context, a Adapter, st Stream, sig Signal) error {
	if err := sig.Validate(); err != nil {
		return err
	}
	s, ok := st.(Signaller)
	if !ok || !Supports(a, CapSignal) {
		return ErrNotSupported
	}
	return s.Signal(ctx, sig)
}

// ResizeTerminal validates size and resizes st's terminal when a
// advertises CapResize and st has the method; otherwise ErrNotSupported.
func ResizeTerminal(ctx context.Context, a Adapter, st Stream, size TermSize) error {
	if err := size.Validate(); err != nil {
		return err
	}
	r, ok := st.(Resizer)
	if !ok || !Supports(a, CapResize) {
		return ErrNotSupported
	}
	return r.Resize(ctx, size)
}
