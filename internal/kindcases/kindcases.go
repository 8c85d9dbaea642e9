// Package kindcases is one error of each shape of the taxonomy, with the
// kind and sentinel it must match and whether it is transient: the table the
// taxonomy's tests and the wire's round-trip tests share.
package kindcases

import (
	"time"

	"github.com/paddockhq/paddock"
)

// Case is one error of a known kind and the sentinel it must match.
type Case struct {
	Name      string
	Err       error
	Kind      paddock.Kind
	Sentinel  error
	Transient bool
}

// All returns a case for every kind: its sentinel, and each typed error
// carrying data.
func All() []Case {
	retry := 2 * time.Second
	return []Case{
		{"not_found sentinel", paddock.ErrNotFound, paddock.KindNotFound, paddock.ErrNotFound, false},
		{"truncated sentinel", paddock.ErrTruncated, paddock.KindTruncated, paddock.ErrTruncated, false},
		{"not_supported sentinel", paddock.ErrNotSupported, paddock.KindNotSupported, paddock.ErrNotSupported, false},
		{"already_exists sentinel", paddock.ErrAlreadyExists, paddock.KindAlreadyExists, paddock.ErrAlreadyExists, false},
		{"command_exited sentinel", paddock.ErrCommandExited, paddock.KindCommandExited, paddock.ErrCommandExited, true},
		{"rate_limited sentinel", paddock.ErrRateLimited, paddock.KindRateLimited, paddock.ErrRateLimited, true},
		{"rate_limited typed with hint", &paddock.RateLimitedError{RetryAfter: &retry}, paddock.KindRateLimited, paddock.ErrRateLimited, true},
		{"rate_limited typed without hint", &paddock.RateLimitedError{}, paddock.KindRateLimited, paddock.ErrRateLimited, true},
		{"unavailable sentinel", paddock.ErrUnavailable, paddock.KindUnavailable, paddock.ErrUnavailable, true},
		{"unavailable typed", &paddock.UnavailableError{Detail: "http", Status: 503}, paddock.KindUnavailable, paddock.ErrUnavailable, true},
		{"closed_before_exit", paddock.ErrClosedBeforeExit, paddock.KindUnavailable, paddock.ErrUnavailable, true},
		{"exec_timeout", &paddock.ExecTimeoutError{Timeout: time.Second}, paddock.KindUnavailable, paddock.ErrUnavailable, true},
		{"denied sentinel", paddock.ErrDenied, paddock.KindDenied, paddock.ErrDenied, false},
		{"denied typed", &paddock.DeniedError{Status: 401}, paddock.KindDenied, paddock.ErrDenied, false},
		{"invalid sentinel", paddock.ErrInvalid, paddock.KindInvalid, paddock.ErrInvalid, false},
		{"invalid typed", &paddock.InvalidError{Detail: paddock.DetailTerminationRequest}, paddock.KindInvalid, paddock.ErrInvalid, false},
		{"restore_failed sentinel", paddock.ErrRestoreFailed, paddock.KindRestoreFailed, paddock.ErrRestoreFailed, false},
		{"restore_failed typed", &paddock.RestoreFailedError{Detail: "disk"}, paddock.KindRestoreFailed, paddock.ErrRestoreFailed, false},
		{"write_failed sentinel", paddock.ErrWriteFailed, paddock.KindWriteFailed, paddock.ErrWriteFailed, true},
		{"write_failed typed", &paddock.WriteFailedError{Detail: "broken pipe"}, paddock.KindWriteFailed, paddock.ErrWriteFailed, true},
		{"provider sentinel", paddock.ErrProvider, paddock.KindProvider, paddock.ErrProvider, true},
		{"provider typed", &paddock.ProviderError{Provider: "e2b", Detail: "odd"}, paddock.KindProvider, paddock.ErrProvider, true},
	}
}
