package paddock

import "time"

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
// capability check or provider access (contract 1.4): the session id must
// match SessionIDPattern, the timeout must be in bounds and the mode known.
// It returns the options with defaults filled in, or an *InvalidError with
// detail termination_request.
func ValidateTermination(sessionID string, o TerminateOpts) (TerminateOpts, error) {
	if ValidateSessionID(sessionID) != nil {
		return o, &InvalidError{Detail: DetailTerminationRequest}
	}
	d, ok := resolveBounded(o.Timeout, DefaultTerminateTimeout, MaxTerminateTimeout)
	if !ok {
		return o, &InvalidError{Detail: DetailTerminationRequest}
	}
	switch o.Mode {
	case "":
		o.Mode = TerminateGraceful
	case TerminateGraceful, TerminateForce:
	default:
		return o, &InvalidError{Detail: DetailTerminationRequest}
	}
	o.Timeout = &d
	return o, nil
}
