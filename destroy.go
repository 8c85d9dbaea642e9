package paddock

import "time"

// Bounds of DestroyOnceOpts.Timeout.
const (
	DefaultDestroyOnceTimeout = 30 * time.Second
	MaxDestroyOnceTimeout     = 120 * time.Second
)

// DestroyOnceOpts are the options of DestroyOnce, one bounded deletion
// attempt whose success requires confirmed absence.
type DestroyOnceOpts struct {
	// Timeout bounds the attempt: nil = 30s; else a whole number of
	// milliseconds in [1ms, 120s].
	Timeout *time.Duration
}

// Validate validates o and returns it with defaults filled in. A bad timeout is
// an *InvalidError with detail delete_timeout.
func (o DestroyOnceOpts) Validate() (DestroyOnceOpts, error) {
	d, ok := resolveBounded(o.Timeout, DefaultDestroyOnceTimeout, MaxDestroyOnceTimeout)
	if !ok {
		return o, &InvalidError{Detail: DetailDeleteTimeout}
	}
	o.Timeout = &d
	return o, nil
}
