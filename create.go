package paddock

import "time"

// CreateOpts are adapter-specific creation parameters, passed through
// unchanged (image, resources, lifetime, ...). Each adapter documents the keys
// it reads and rejects any other key with an *InvalidError; a nil map is the
// adapter's defaults.
type CreateOpts struct {
	Params map[string]string `json:"params,omitempty"`
}

// Bounds of CreateNewOpts.Timeout.
const (
	DefaultCreateNewTimeout = 120 * time.Second
	MaxCreateNewTimeout     = 120 * time.Second
)

// CreateNewOpts are the options of CreateNew, one creation attempt that never
// adopts.
type CreateNewOpts struct {
	// Timeout bounds the attempt: nil = 120s; else a whole number of
	// milliseconds in [1ms, 120s].
	Timeout *time.Duration
	// WaitForCapacity asks the provider to queue the creation rather than
	// refuse it when it has no capacity. Default false.
	WaitForCapacity bool
}

// Validate validates o and returns it with defaults filled in. A bad timeout is
// an *InvalidError with detail create_timeout.
func (o CreateNewOpts) Validate() (CreateNewOpts, error) {
	d, ok := resolveBounded(o.Timeout, DefaultCreateNewTimeout, MaxCreateNewTimeout)
	if !ok {
		return o, &InvalidError{Detail: DetailCreateTimeout}
	}
	o.Timeout = &d
	return o, nil
}
