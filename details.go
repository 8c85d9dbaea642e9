package paddock

// Detail tokens carried by taxonomy errors (contract section 3.1). Bounded
// operations answer with these tokens only, never with provider prose.
const (
	// Invalid details: input rejected before any provider access.
	DetailCreateTimeout         = "create_timeout"
	DetailCreateOptions         = "create_options"
	DetailDeleteTimeout         = "delete_timeout"
	DetailDeleteOptions         = "delete_options"
	DetailTerminationRequest    = "termination_request"
	DetailCheckpointTimeout     = "checkpoint_timeout"
	DetailCheckpointOperationID = "checkpoint_operation_id"
	DetailCheckpointOptions     = "checkpoint_options"
	DetailCommand               = "command"        // a Cmd that cannot run: empty path, NUL bytes, bad env
	DetailExecOptions           = "exec_options"   // an ExecOpts out of bounds
	DetailSpawnOptions          = "spawn_options"  // a SpawnOpts out of bounds or a bad session name
	DetailSessionID             = "session_id"     // a session id that does not match SessionIDPattern
	DetailNetworkPolicy         = "network_policy" // an allow entry that is not a domain rule
	DetailExposeOptions         = "expose_options" // a port outside 1..65535 or a TTL out of bounds
	DetailSandboxName           = "sandbox_name"   // an empty or malformed sandbox name
	DetailPath                  = "path"           // an empty or relative file path
	DetailBackoffOptions        = "backoff_options"

	// Unavailable details: the outcome is unknown.
	DetailCreateUnconfirmed          = "create_unconfirmed"
	DetailCreateTransportFailed      = "create_transport_failed"
	DetailDeleteUnconfirmed          = "delete_unconfirmed"
	DetailDeleteTransportFailed      = "delete_transport_failed"
	DetailTerminationUnconfirmed     = "termination_unconfirmed"
	DetailTerminationTransportFailed = "termination_transport_failed"
	DetailTerminationTimeout         = "termination_timeout"
	DetailCheckpointUnconfirmed      = "checkpoint_unconfirmed"
	DetailCheckpointTransportFailed  = "checkpoint_transport_failed"
	DetailExecTimeout                = "exec_timeout"
	DetailClosedBeforeExit           = "closed_before_exit"
	// DetailOutputTruncated: the command ended, but its output could not
	// be read to the end (a process kept it open even after being killed),
	// so its exit is not reported as if the output were whole.
	DetailOutputTruncated = "output_truncated"
	DetailStartTimeout    = "start_timeout"
	DetailTimeout         = "timeout"
	DetailException       = "exception"
)

// Detail sentinels for the answers callers most often test for with errors.Is.
var (
	ErrClosedBeforeExit        error = &UnavailableError{Detail: DetailClosedBeforeExit}
	ErrOutputTruncated         error = &UnavailableError{Detail: DetailOutputTruncated}
	ErrExecTimeout             error = &UnavailableError{Detail: DetailExecTimeout}
	ErrStartTimeout            error = &UnavailableError{Detail: DetailStartTimeout}
	ErrTerminationUnconfirmed  error = &UnavailableError{Detail: DetailTerminationUnconfirmed}
	ErrTerminationRequest      error = &InvalidError{Detail: DetailTerminationRequest}
	ErrCreateUnconfirmed       error = &UnavailableError{Detail: DetailCreateUnconfirmed}
	ErrDeleteUnconfirmed       error = &UnavailableError{Detail: DetailDeleteUnconfirmed}
	ErrCheckpointUnconfirmed   error = &UnavailableError{Detail: DetailCheckpointUnconfirmed}
	ErrCheckpointOperationID   error = &InvalidError{Detail: DetailCheckpointOperationID}
	ErrCheckpointTimeoutOption error = &InvalidError{Detail: DetailCheckpointTimeout}
	ErrCreateTimeoutOption     error = &InvalidError{Detail: DetailCreateTimeout}
	ErrDeleteTimeoutOption     error = &InvalidError{Detail: DetailDeleteTimeout}
)
