package paddock

import (
	"time"
)

// Checkpoint is one saved state of a sandbox, as a provider's listing
// reports it. IDs come from listings, never from progress prose.
type Checkpoint struct {
	ID        string    `json:"id"`
	Comment   string    `json:"comment,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// CheckpointOpts are the options of CreateCheckpoint.
type CheckpointOpts struct {
	Comment string // stored with the checkpoint where the provider keeps comments
}

// Bounds of CheckpointOnceOpts.Timeout.
const (
	DefaultCheckpointOnceTimeout = 30 * time.Second
	MaxCheckpointOnceTimeout     = 120 * time.Second
)

// CheckpointOnceOpts are the options of CreateCheckpointOnce. OperationID
// comes from the host's durable intent and is never reused.
type CheckpointOnceOpts struct {
	// Timeout bounds the whole attempt: nil = 30s; else a whole number of
	// milliseconds in [1ms, 120s].
	Timeout     *time.Duration
	OperationID string // must match OperationIDPattern
}

// Validate validates o in the contract's order (timeout first, then the
// operation id) and returns it with defaults filled in. Errors are
// *InvalidError with detail checkpoint_timeout or checkpoint_operation_id.
func (o CheckpointOnceOpts) Validate() (CheckpointOnceOpts, error) {
	d, ok := resolveBounded(o.Timeout, DefaultCheckpointOnceTimeout, MaxCheckpointOnceTimeout)
	if !ok {
		return o, &InvalidError{Detail: DetailCheckpointTimeout}
	}
	if err := ValidateOperationID(o.OperationID); err != nil {
		return o, err
	}
	o.Timeout = &d
	return o, nil
}

// CheckpointComment is the comment CreateCheckpointOnce attaches so that the
// checkpoint can be found again by its operation id.
func CheckpointComment(operationID string) string { return "sandbox-operation:" + operationID }
