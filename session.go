package paddock

import "time"

// Session is a detachable command living in a sandbox
// (docs/contract.md#sessions).
// ID is opaque and matches SessionIDPattern; Command is the full command line,
// path and arguments joined by single spaces. There is deliberately no
// "attached" flag: a detached session is exactly what Attach recovers.
// State says whether the command still runs and, once it ended, how: the
// same end an Attach would replay.
type Session struct {
	ID             string       `json:"id"`
	Name           string       `json:"name,omitempty"` // the SpawnOpts.Name it was started with, if any
	Command        string       `json:"command,omitempty"`
	CreatedAt      time.Time    `json:"created_at,omitzero"`
	LastActivityAt time.Time    `json:"last_activity_at,omitzero"`
	TTY            bool         `json:"tty,omitempty"`
	State          SessionState `json:"state,omitempty"`     // "" when the provider cannot tell
	ExitCode       *int         `json:"exit_code,omitempty"` // set exactly when State is SessionExited
	Failure        string       `json:"failure,omitempty"`   // SessionFailed: the recorded error, as its text
}

// SessionState is where a session's command is in its life.
type SessionState string

// The session states. A listing that cannot tell leaves State empty.
const (
	// SessionRunning: the command has not ended.
	SessionRunning SessionState = "running"
	// SessionExited: the command exited; ExitCode holds its code.
	SessionExited SessionState = "exited"
	// SessionFailed: the session ended with an error instead of an exit
	// (closed_before_exit, session_output_limit, ...); Failure holds it.
	SessionFailed SessionState = "failed"
	// SessionEnded: the command ended and the provider kept no record of
	// how (a session that is not journaled, such as docker's TTY sessions).
	SessionEnded SessionState = "ended"
)

// Ended sets State, ExitCode and Failure from the session's terminal
// event: an exit, or an error.
func (s *Session) Ended(ev Event) {
	switch ev.Kind {
	case EventExit:
		code := ev.Code
		s.State, s.ExitCode, s.Failure = SessionExited, &code, ""
	case EventError:
		s.State, s.ExitCode, s.Failure = SessionFailed, nil, ev.Err.Error()
	}
}

// TerminateMode says how TerminateSession stops a session.
type TerminateMode string

// The termination modes. The empty mode means graceful.
const (
	// TerminateGraceful sends SIGTERM, waits up to the timeout, then kills;
	// a session that is already gone counts as terminated.
	TerminateGraceful TerminateMode = "graceful"
	// TerminateForce sends SIGKILL to the process group at once and needs
	// affirmative evidence of the kill; a missing session is uncertain.
	TerminateForce TerminateMode = "force"
)

// Bounds of TerminateOpts.Timeout.
const (
	DefaultTerminateTimeout = 10 * time.Second
	MaxTerminateTimeout     = 30 * time.Second
	// TerminateTransportAllowance is the extra time an adapter may spend on
	// transport beyond the timeout.
	TerminateTransportAllowance = 5 * time.Second
)

// TerminateOpts are the options of TerminateSession.
type TerminateOpts struct {
	// Timeout is the graceful stop allowance (a wait allowance in force
	// mode): nil = 10s; else a whole number of milliseconds in [1ms, 30s].
	Timeout *time.Duration
	Mode    TerminateMode // "" = graceful
}

// ValidateTermination checks a TerminateSession request before any
// capability check or provider access (docs/contract.md#op-terminate-session):
// the session id must
// match SessionIDPattern, the timeout must be in bounds and the mode known.
// It returns the options with defaults filled in, or an *InvalidError with
// detail termination_request.
func ValidateTermination(sessionID string, o TerminateOpts) (TerminateOpts, error) {
	if ValidateSessionID(sessionID) != nil {
		return o, &InvalidError{Detail: DetailTerminationRequest}
	}
	var err error
	if o.Timeout, err = boundedTimeout(o.Timeout, DefaultTerminateTimeout, MaxTerminateTimeout, DetailTerminationRequest); err != nil {
		return o, err
	}
	switch o.Mode {
	case "":
		o.Mode = TerminateGraceful
	case TerminateGraceful, TerminateForce:
	default:
		return o, &InvalidError{Detail: DetailTerminationRequest}
	}
	return o, nil
}

// SessionIDPattern is the syntax of a session id. Adapters mint ids that
// match it, so every session can be terminated.
const (
	SessionIDPattern = `^[A-Za-z0-9_-]{1,256}$`
	maxSessionIDLen  = 256
)

// ValidateSessionID answers an *InvalidError with detail session_id unless
// id matches SessionIDPattern: 1 to 256 bytes of ASCII letters, digits, '_'
// and '-'. Such an id cannot escape a path.
func ValidateSessionID(id string) error {
	if !isToken(id, maxSessionIDLen) {
		return &InvalidError{Detail: DetailSessionID}
	}
	return nil
}

// isToken reports whether s is 1..max bytes of [A-Za-z0-9_-].
func isToken(s string, max int) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}
