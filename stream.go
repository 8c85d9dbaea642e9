package paddock

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/rs/zerolog"
)

// EventKind says what one stream event carries.
type EventKind int

// The event kinds of a command stream. Exit and Error are terminal.
const (
	EventStdout EventKind = iota + 1 // Data is one chunk of standard output
	EventStderr                      // Data is one chunk of standard error; never in tty mode
	EventExit                        // Code is the exit code; terminal
	EventError                       // Err is the taxonomy error; terminal; the fate is unknown
	EventFile                        // File is one change of a watched directory (a watch's stream only)
)

// String names the kind.
func (k EventKind) String() string {
	switch k {
	case EventStdout:
		return "stdout"
	case EventStderr:
		return "stderr"
	case EventExit:
		return "exit"
	case EventError:
		return "error"
	case EventFile:
		return "file"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Terminal reports whether the kind ends a stream.
func (k EventKind) Terminal() bool { return k == EventExit || k == EventError }

// Event is one thing a command stream yields: an output chunk, the exit, or
// an error that ends the stream with an unknown fate (for example a transport
// that closed before the exit, as *UnavailableError{closed_before_exit}).
type Event struct {
	Kind EventKind
	Data []byte    // EventStdout, EventStderr
	Code int       // EventExit
	Err  error     // EventError
	File FileEvent // EventFile
}

// Stdout returns a stdout event carrying p.
func Stdout(p []byte) Event { return Event{Kind: EventStdout, Data: p} }

// Stderr returns a stderr event carrying p.
func Stderr(p []byte) Event { return Event{Kind: EventStderr, Data: p} }

// Exit returns an exit event with code.
func Exit(code int) Event { return Event{Kind: EventExit, Code: code} }

// Failed returns an error event carrying err.
func Failed(err error) Event { return Event{Kind: EventError, Err: err} }

// Stream is one subscription to a spawned or attached command, as an adapter
// returns it. The caller pulls events with Next; a stream yields its output
// in order, then exactly one terminal event (EventExit or EventError), then
// io.EOF forever. A transport that ends without an exit yields an EventError
// of ErrClosedBeforeExit, never a made-up exit 0.
//
// Next is called from one goroutine at a time; WriteStdin, CloseStdin and
// Close may be called concurrently with Next and with each other. The Data
// of an event is the caller's to keep and read, never to change: an
// adapter never reuses or changes it once returned and may return the same
// bytes to every subscription of a session (the runtime forwards them into
// frames without a copy).
type Stream interface {
	// Next blocks for the next event. It returns io.EOF after the terminal
	// event, and ctx.Err() if ctx ends first (the stream stays usable).
	Next(ctx context.Context) (Event, error)
	// WriteStdin delivers p to the command's stdin, in order. After the
	// command exited, or after Close, it returns ErrCommandExited; any other
	// failure is a *WriteFailedError. It never panics.
	WriteStdin(ctx context.Context, p []byte) error
	// CloseStdin sends EOF to the command's stdin.
	CloseStdin(ctx context.Context) error
	// Close detaches this subscription locally: it never kills the remote
	// command, which stays attachable where the adapter supports sessions.
	// After Close, Next returns io.EOF with no terminal event. Close is
	// idempotent and always returns nil.
	Close() error
	// SessionID is the id Attach and TerminateSession accept for this
	// command, or "" when the command is not a session.
	SessionID() string
}

// SpawnOpts are the options of Spawn. The owner of the frames is the
// runtime's concern, not the adapter's.
type SpawnOpts struct {
	Stdin      bool // keep stdin open for WriteStdin
	TTY        bool // allocate a PTY (needs CapTTY); no stderr events in tty mode
	Detachable bool // the command survives a local Close and can be attached
	// Name makes the start idempotent (needs CapNamedSpawn): while a session
	// of this name lives in the sandbox, Spawn attaches to it instead of
	// starting a second one. "" = no name; else it must match
	// SessionIDPattern.
	Name string
	// Size is a TTY's initial size (needs TTY and CapResize); nil = the
	// adapter's default (24 rows of 80 columns).
	Size *TermSize
}

// Validate reports an *InvalidError with detail spawn_options for a Name that
// does not match SessionIDPattern or a Size without TTY, and term_size for
// a Size out of bounds.
func (o SpawnOpts) Validate() error {
	if o.Name != "" && ValidateSessionID(o.Name) != nil {
		return &InvalidError{Detail: DetailSpawnOptions + ": session name must match " + SessionIDPattern}
	}
	if o.Size != nil {
		if !o.TTY {
			return &InvalidError{Detail: DetailSpawnOptions + ": a size needs a TTY"}
		}
		return o.Size.Validate()
	}
	return nil
}

// AttachOpts are the options of Attach.
type AttachOpts struct {
	Stdin bool // writes through the attached stream reach the original process
}

// Ref is the correlation key of one command subscription: fresh for every
// spawn and every attach, carried by every frame. It is comparable, so it can
// key a map.
type Ref string

// Subscription is a provider-tagged reference to one streaming command
// subscription (docs/contract.md#values). Provider selects the adapter for stdin
// and stop; Private belongs to whoever minted the subscription and is never
// printed, logged or encoded.
type Subscription struct {
	Provider Provider `json:"provider"`
	Ref      Ref      `json:"ref"`
	Private  any      `json:"-"`
}

// String returns "provider/ref".
func (c Subscription) String() string { return string(c.Provider) + "/" + string(c.Ref) }

// GoString returns a Go-syntax form without private state.
func (c Subscription) GoString() string {
	return fmt.Sprintf("paddock.Subscription{Provider:%q, Ref:%q}", string(c.Provider), string(c.Ref))
}

// Format prints the subscription for every fmt verb without private state.
func (c Subscription) Format(f fmt.State, verb rune) { formatSafe(f, verb, c.String(), c.GoString()) }

// MarshalZerologObject logs the provider and the ref.
func (c Subscription) MarshalZerologObject(e *zerolog.Event) {
	e.Str("provider", string(c.Provider)).Str("ref", string(c.Ref))
}

// LogValue logs the provider and the ref through log/slog.
func (c Subscription) LogValue() slog.Value {
	return slog.GroupValue(slog.String("provider", string(c.Provider)), slog.String("ref", string(c.Ref)))
}

// ValidateSpawn validates a Spawn request and its capability gates: TTY needs
// CapTTY and a Name needs CapNamedSpawn.
func ValidateSpawn(a Adapter, cmd Cmd, opts SpawnOpts) error {
	if err := cmd.Validate(); err != nil {
		return err
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	if opts.TTY {
		if err := Require(a, CapTTY); err != nil {
			return err
		}
	}
	if opts.Size != nil {
		if err := Require(a, CapResize); err != nil {
			return err
		}
	}
	if opts.Name != "" {
		return Require(a, CapNamedSpawn)
	}
	return nil
}

// ValidateAttach validates an Attach request: the id must match
// SessionIDPattern and the adapter advertise CapAttach.
func ValidateAttach(a Adapter, sessionID string) error {
	if err := ValidateSessionID(sessionID); err != nil {
		return err
	}
	return Require(a, CapAttach)
}
