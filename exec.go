package paddock

import "time"

// ExecOpts are the options of Exec.
type ExecOpts struct {
	// Timeout bounds local collection of the result with one monotonic
	// deadline (contract section 6): nil = no limit; a pointer to zero
	// answers the timeout error at once, without starting anything; a
	// negative value is invalid. Expiry is reported as *ExecTimeoutError
	// carrying this original value.
	Timeout *time.Duration
	// StderrToStdout interleaves stderr into Output in arrival order;
	// otherwise stderr is discarded.
	StderrToStdout bool
}

// Validate reports an *InvalidError with detail exec_options for a negative
// timeout.
func (o ExecOpts) Validate() error {
	if o.Timeout != nil && *o.Timeout < 0 {
		return &InvalidError{Detail: DetailExecOptions + ": negative timeout"}
	}
	return nil
}

// ExecResult is a finished command's output and exit code. A nonzero exit
// code is data, not an error.
type ExecResult struct {
	Output   []byte `json:"output"`
	ExitCode int    `json:"exit_code"`
}
