package supervisor

// Violation is a frame-contract breach by an adapter that the Guard
// absorbed: a second terminal event, or output after the terminal event.
// The runtime broadcasts it on the engine's event stream and logs it; it is
// never forwarded to the owner. (It deliberately does not implement
// hollywood's EventLogger, which would log through the global slog default.)
type Violation struct {
	Ref  string // the subscription
	What string // ViolationDuplicateTerminal or ViolationLateOutput
	Kind string // the event that was dropped: stdout, stderr, exit, error, end
}

// Violation kinds.
const (
	ViolationDuplicateTerminal = "duplicate_terminal"
	ViolationLateOutput        = "late_output"
)
