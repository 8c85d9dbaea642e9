package paddock

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Kind names one class of the closed error taxonomy
// (docs/contract.md#taxonomy).
// Every error an adapter or the runtime returns has exactly one Kind, found
// with KindOf; no package may invent another.
type Kind string

// The closed taxonomy.
const (
	KindNotFound      Kind = "not_found"      // the sandbox or session definitively does not exist
	KindTruncated     Kind = "truncated"      // a listing refused to return a partial view
	KindNotSupported  Kind = "not_supported"  // the adapter lacks the operation, or it is disabled
	KindAlreadyExists Kind = "already_exists" // a fresh creation refused an existing name
	KindCommandExited Kind = "command_exited" // a stdin write or close raced the exit, or hit a detached command
	KindRateLimited   Kind = "rate_limited"   // throttled; see RateLimitedError
	KindUnavailable   Kind = "unavailable"    // 5xx, timeout, transport failure, unknown fate
	KindDenied        Kind = "denied"         // 401/403, a credential problem
	KindInvalid       Kind = "invalid"        // the caller's fault: bad input, other 4xx and 3xx
	KindRestoreFailed Kind = "restore_failed" // a checkpoint restore reported failure
	KindWriteFailed   Kind = "write_failed"   // a stdin write failed for a reason other than exit
	KindProvider      Kind = "provider"       // an unclassified provider error
)

// Kinds returns every kind of the taxonomy, in the contract's order.
func Kinds() []Kind {
	return []Kind{
		KindNotFound, KindTruncated, KindNotSupported, KindAlreadyExists,
		KindCommandExited, KindRateLimited, KindUnavailable, KindDenied,
		KindInvalid, KindRestoreFailed, KindWriteFailed, KindProvider,
	}
}

// Transient reports whether an error of this kind may succeed when retried
// (docs/contract.md#transient). Kinds outside the taxonomy are transient.
func (k Kind) Transient() bool {
	switch k {
	case KindNotFound, KindTruncated, KindNotSupported, KindAlreadyExists,
		KindDenied, KindInvalid, KindRestoreFailed:
		return false
	}
	return true
}

// kindError is a bare kind with no data; it backs the kind sentinels.
type kindError struct{ kind Kind }

func (e *kindError) Error() string { return strings.ReplaceAll(string(e.kind), "_", " ") }
func (e *kindError) Kind() Kind    { return e.kind }

// Is matches any bare error of the same kind, so a decoded sentinel matches
// the package's own.
func (e *kindError) Is(target error) bool {
	t, ok := target.(*kindError)
	return ok && t.kind == e.kind
}

// Kind sentinels: match any error of a kind with errors.Is, whether it is the
// sentinel itself or a typed error below.
var (
	ErrNotFound      error = &kindError{KindNotFound}
	ErrTruncated     error = &kindError{KindTruncated}
	ErrNotSupported  error = &kindError{KindNotSupported}
	ErrAlreadyExists error = &kindError{KindAlreadyExists}
	ErrCommandExited error = &kindError{KindCommandExited}
	ErrRateLimited   error = &kindError{KindRateLimited}
	ErrUnavailable   error = &kindError{KindUnavailable}
	ErrDenied        error = &kindError{KindDenied}
	ErrInvalid       error = &kindError{KindInvalid}
	ErrRestoreFailed error = &kindError{KindRestoreFailed}
	ErrWriteFailed   error = &kindError{KindWriteFailed}
	ErrProvider      error = &kindError{KindProvider}
)

// ErrNoPublicURL is PublicURL's answer when the question does not apply (no
// public_url capability, or no URL on record). It is deliberately outside the
// taxonomy: callers treat it as "no URL to report", not as a failure.
var ErrNoPublicURL = errors.New("no public url")

// KindOf returns the taxonomy kind of err, looking through wrapping, or ""
// when err is nil or outside the taxonomy.
func KindOf(err error) Kind {
	var k interface{ Kind() Kind }
	if errors.As(err, &k) {
		return k.Kind()
	}
	return ""
}

// sameDetail reports whether detail is want, or want's token followed by
// ": " and more.
func sameDetail(want, detail string) bool {
	return want != "" && (detail == want || strings.HasPrefix(detail, want+": "))
}

// withDetail formats "kind: detail", or the bare kind when there is no detail.
func withDetail(k Kind, detail string, status int) string {
	s := strings.ReplaceAll(string(k), "_", " ")
	if status != 0 {
		s += fmt.Sprintf(" (http %d)", status)
	}
	if detail != "" {
		s += ": " + detail
	}
	return s
}

// RateLimitedError is a throttling answer. RetryAfter is the provider's hint
// (nil when it gave none); WithBackoff does not use it, callers may.
type RateLimitedError struct {
	RetryAfter *time.Duration
}

func (e *RateLimitedError) Error() string {
	if e.RetryAfter == nil {
		return "rate limited"
	}
	return "rate limited: retry after " + e.RetryAfter.String()
}

// Kind returns KindRateLimited.
func (e *RateLimitedError) Kind() Kind { return KindRateLimited }

// Is matches ErrRateLimited.
func (e *RateLimitedError) Is(target error) bool { return target == ErrRateLimited }

// UnavailableError means the outcome is unknown or the provider could not be
// reached: a 5xx, a timeout, a transport failure, a stream closed before its
// exit. Detail is a token such as DetailClosedBeforeExit, or short safe text.
type UnavailableError struct {
	Detail string
	Status int // the HTTP status when one was received, else 0
}

func (e *UnavailableError) Error() string { return withDetail(KindUnavailable, e.Detail, e.Status) }

// Kind returns KindUnavailable.
func (e *UnavailableError) Kind() Kind { return KindUnavailable }

// Is matches ErrUnavailable, and any *UnavailableError with the same non-empty
// Detail or a detail that is its token with more after a colon (so
// errors.Is(err, ErrClosedBeforeExit) works).
func (e *UnavailableError) Is(target error) bool {
	if target == ErrUnavailable {
		return true
	}
	t, ok := target.(*UnavailableError)
	return ok && sameDetail(t.Detail, e.Detail)
}

// DeniedError is a credential or permission problem (401, 403, missing token).
type DeniedError struct {
	Detail string
	Status int
}

func (e *DeniedError) Error() string { return withDetail(KindDenied, e.Detail, e.Status) }

// Kind returns KindDenied.
func (e *DeniedError) Kind() Kind { return KindDenied }

// Is matches ErrDenied and any *DeniedError with the same non-empty Detail.
func (e *DeniedError) Is(target error) bool {
	if target == ErrDenied {
		return true
	}
	t, ok := target.(*DeniedError)
	return ok && t.Detail != "" && t.Detail == e.Detail
}

// InvalidError is the caller's fault: input that fails validation, or a 4xx
// (other than 401/403/404/429) or 3xx answer. Retrying will not help.
type InvalidError struct {
	Detail string
	Status int
}

func (e *InvalidError) Error() string { return withDetail(KindInvalid, e.Detail, e.Status) }

// Kind returns KindInvalid.
func (e *InvalidError) Kind() Kind { return KindInvalid }

// Is matches ErrInvalid and any *InvalidError with the same non-empty Detail
// or a detail that is its token with more after a colon (so
// errors.Is(err, ErrTerminationRequest) works).
func (e *InvalidError) Is(target error) bool {
	if target == ErrInvalid {
		return true
	}
	t, ok := target.(*InvalidError)
	return ok && sameDetail(t.Detail, e.Detail)
}

// RestoreFailedError is a checkpoint restore the provider reported as failed,
// even inside an otherwise successful response.
type RestoreFailedError struct {
	Detail string
}

func (e *RestoreFailedError) Error() string { return withDetail(KindRestoreFailed, e.Detail, 0) }

// Kind returns KindRestoreFailed.
func (e *RestoreFailedError) Kind() Kind { return KindRestoreFailed }

// Is matches ErrRestoreFailed.
func (e *RestoreFailedError) Is(target error) bool { return target == ErrRestoreFailed }

// WriteFailedError is a stdin write that failed for a reason other than the
// command's exit.
type WriteFailedError struct {
	Detail string
}

func (e *WriteFailedError) Error() string { return withDetail(KindWriteFailed, e.Detail, 0) }

// Kind returns KindWriteFailed.
func (e *WriteFailedError) Kind() Kind { return KindWriteFailed }

// Is matches ErrWriteFailed.
func (e *WriteFailedError) Is(target error) bool { return target == ErrWriteFailed }

// ProviderError is the escape hatch for a provider answer no other kind
// describes. It counts as transient.
type ProviderError struct {
	Provider Provider
	Detail   string
}

func (e *ProviderError) Error() string {
	return "provider error from " + string(e.Provider) + ": " + e.Detail
}

// Kind returns KindProvider.
func (e *ProviderError) Kind() Kind { return KindProvider }

// Is matches ErrProvider.
func (e *ProviderError) Is(target error) bool { return target == ErrProvider }

// ExecTimeoutError is Exec's answer when its deadline passed. Timeout is
// always the caller's original value, however much budget remained. It is of
// kind unavailable with detail DetailExecTimeout.
type ExecTimeoutError struct {
	Timeout time.Duration
}

func (e *ExecTimeoutError) Error() string {
	return "unavailable: " + DetailExecTimeout + " after " + e.Timeout.String()
}

// Kind returns KindUnavailable.
func (e *ExecTimeoutError) Kind() Kind { return KindUnavailable }

// Is matches ErrUnavailable and ErrExecTimeout.
func (e *ExecTimeoutError) Is(target error) bool {
	if target == ErrUnavailable {
		return true
	}
	t, ok := target.(*UnavailableError)
	return ok && t.Detail == DetailExecTimeout
}

// OpError wraps a taxonomy error with the operation and the provider that
// produced it, as fs.PathError does. Unwrap reaches the taxonomy error.
type OpError struct {
	Op       string
	Provider Provider
	Name     string // the sandbox name, when the operation had one
	Err      error
}

func (e *OpError) Error() string {
	target := string(e.Provider)
	if e.Name != "" {
		target += "/" + e.Name
	}
	return e.Op + " " + target + ": " + e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *OpError) Unwrap() error { return e.Err }

// UnknownProviderError is the loud answer of every dispatching call whose
// provider is not in the configured registry. It is outside the taxonomy, it
// is a configuration mistake, and IsTransient reports it as permanent.
type UnknownProviderError struct {
	Provider   Provider
	Configured []Provider
}

func (e *UnknownProviderError) Error() string {
	names := make([]string, len(e.Configured))
	for i, p := range e.Configured {
		names[i] = string(p)
	}
	sort.Strings(names)
	return fmt.Sprintf("unknown sandbox provider %q (configured: %s)", string(e.Provider), strings.Join(names, ", "))
}

// IsTransient reports whether retrying an idempotent call that failed with err
// may succeed (docs/contract.md#transient): unavailable and rate_limited are
// transient; not_found, truncated, not_supported, already_exists, denied,
// invalid and restore_failed are not; every other error, including
// command_exited, write_failed, provider and any error outside the taxonomy,
// is transient. Two errors this package defines outside the taxonomy are
// permanent, because no retry can change them: ErrNoPublicURL and
// *UnknownProviderError. IsTransient(nil) is false.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	if k := KindOf(err); k != "" {
		return k.Transient()
	}
	var unknown *UnknownProviderError
	if errors.Is(err, ErrNoPublicURL) || errors.As(err, &unknown) {
		return false
	}
	return true
}

// Detail tokens carried by taxonomy errors (docs/contract.md#details). Bounded
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
	DetailCheckpointID          = "checkpoint_id" // an empty checkpoint id
	// DetailCheckpointLimit: the adapter keeps as many checkpoints (or
	// bytes of them) as it may; delete one first.
	DetailCheckpointLimit = "checkpoint_limit"
	DetailCommand         = "command"        // a Cmd that cannot run: empty path, NUL bytes, bad env
	DetailExecOptions     = "exec_options"   // an ExecOpts out of bounds
	DetailSpawnOptions    = "spawn_options"  // a SpawnOpts out of bounds or a bad session name
	DetailSessionID       = "session_id"     // a session id that does not match SessionIDPattern
	DetailNetworkPolicy   = "network_policy" // an allow entry that is not a domain rule
	DetailExposeOptions   = "expose_options" // a port outside 1..65535 or a TTL out of bounds
	DetailSandboxName     = "sandbox_name"   // an empty or malformed sandbox name
	DetailPath            = "path"           // an empty or relative file path
	DetailBackoffOptions  = "backoff_options"
	DetailSignal          = "signal"    // a signal outside the contract's set
	DetailTermSize        = "term_size" // a terminal size outside 1..1000
	// DetailExecOutputLimit: the command printed more than ExecOpts.MaxOutput
	// and was stopped. It is invalid, not unavailable, because the outcome
	// is known and the same request would fail the same way: raise the cap
	// or stream the output with Spawn.
	DetailExecOutputLimit = "exec_output_limit"
	// DetailSessionOutputLimit: a session printed more than its adapter
	// keeps for replay (its journal's cap); the command was stopped there
	// and its recorded output ends at the cap. Invalid for the same reason
	// as DetailExecOutputLimit.
	DetailSessionOutputLimit = "session_output_limit"
	// DetailFileTooLarge: a file over the cap of whoever carries it (an
	// adapter's, the console's, a link's message limit). WriteFile left the
	// file as it was.
	DetailFileTooLarge = "file_too_large"
	// DetailFileSource: the reader handed to WriteFile failed; the file was
	// left as it was, and the reader's error is wrapped.
	DetailFileSource = "file_source"

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
	// DetailCheckpointRestored: the command was stopped because its
	// sandbox was restored to a checkpoint.
	DetailCheckpointRestored = "checkpoint_restored"
	DetailExecTimeout        = "exec_timeout"
	DetailClosedBeforeExit   = "closed_before_exit"
	// DetailOutputTruncated: the command ended, but its output could not
	// be read to the end (a process kept it open even after being killed),
	// so its exit is not reported as if the output were whole.
	DetailOutputTruncated = "output_truncated"
	DetailStartTimeout    = "start_timeout"
	// DetailWatchOverflow: a watch saw more changes than it holds for its
	// reader (MaxWatchBacklog, or the provider's own queue): some were lost,
	// so the watch ends rather than go on with a gap.
	DetailWatchOverflow = "watch_overflow"
	DetailTimeout       = "timeout"
	DetailException     = "exception"
)

// DetailTokens returns every detail token of the contract, the closed set
// a detail's leading token comes from (docs/contract.md#details): what
// metrics may use as a label value.
func DetailTokens() []string {
	return []string{
		DetailCreateTimeout, DetailCreateOptions, DetailDeleteTimeout, DetailDeleteOptions,
		DetailTerminationRequest, DetailCheckpointTimeout, DetailCheckpointOperationID,
		DetailCheckpointOptions, DetailCheckpointID, DetailCheckpointLimit, DetailCommand, DetailExecOptions, DetailSpawnOptions,
		DetailSessionID, DetailNetworkPolicy, DetailExposeOptions, DetailSandboxName,
		DetailPath, DetailBackoffOptions, DetailSignal, DetailTermSize,
		DetailExecOutputLimit, DetailSessionOutputLimit, DetailFileTooLarge, DetailFileSource, DetailCreateUnconfirmed,
		DetailCreateTransportFailed, DetailDeleteUnconfirmed, DetailDeleteTransportFailed,
		DetailTerminationUnconfirmed, DetailTerminationTransportFailed, DetailTerminationTimeout,
		DetailCheckpointUnconfirmed, DetailCheckpointTransportFailed, DetailCheckpointRestored, DetailExecTimeout,
		DetailClosedBeforeExit, DetailOutputTruncated, DetailStartTimeout,
		DetailWatchOverflow, DetailTimeout, DetailException,
	}
}

// Detail sentinels for the answers callers most often test for with errors.Is.
var (
	ErrClosedBeforeExit        error = &UnavailableError{Detail: DetailClosedBeforeExit}
	ErrOutputTruncated         error = &UnavailableError{Detail: DetailOutputTruncated}
	ErrExecTimeout             error = &UnavailableError{Detail: DetailExecTimeout}
	ErrExecOutputLimit         error = &InvalidError{Detail: DetailExecOutputLimit}
	ErrSessionOutputLimit      error = &InvalidError{Detail: DetailSessionOutputLimit}
	ErrFileTooLarge            error = &InvalidError{Detail: DetailFileTooLarge}
	ErrStartTimeout            error = &UnavailableError{Detail: DetailStartTimeout}
	ErrWatchOverflow           error = &UnavailableError{Detail: DetailWatchOverflow}
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
