package paddock

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Status is the provider-neutral state of a sandbox: exactly one of running,
// suspended or unknown. Provider vocabulary never leaks into it.
type Status string

// The three statuses.
const (
	StatusRunning   Status = "running"
	StatusSuspended Status = "suspended"
	StatusUnknown   Status = "unknown"
)

// Info is Get's answer: what a caller asks about a sandbox. A field the
// provider does not report is empty (each adapter's Get says which); Raw
// is the provider's own unparsed answer (JSON, possibly empty).
type Info struct {
	// Name is the sandbox's name, the key of Create.
	Name string `json:"name"`
	// ID is the provider's own id of this incarnation (a container id, a
	// sandbox id); "" where the provider has none.
	ID string `json:"id,omitempty"`
	// Image is what the sandbox runs: an image, a template or a snapshot.
	Image string `json:"image,omitempty"`
	// Status is the neutral state: running, suspended or unknown.
	Status Status `json:"status"`
	// CreatedAt is when the provider created the sandbox.
	CreatedAt time.Time       `json:"created_at,omitzero"`
	Raw       json.RawMessage `json:"raw,omitempty"`
}

// providerStates holds the observed state vocabularies
// (docs/contract.md#vocabulary).
var providerStates = map[Provider]map[string]Status{
	ProviderSprites: {
		"running": StatusRunning, "ready": StatusRunning, "active": StatusRunning,
		"suspended": StatusSuspended, "paused": StatusSuspended, "stopped": StatusSuspended,
	},
	ProviderE2B: {
		"running": StatusRunning, "paused": StatusSuspended,
	},
	ProviderDaytona: {
		"started": StatusRunning, "starting": StatusRunning, "resuming": StatusRunning,
		"stopped": StatusSuspended, "stopping": StatusSuspended, "archived": StatusSuspended,
		"archiving": StatusSuspended, "paused": StatusSuspended, "pausing": StatusSuspended,
	},
}

// StatusOf maps a provider's own state word to a Status using the mappings
// observed so far (docs/contract.md#vocabulary). Anything unrecognised, including every
// state of a provider without a table, is StatusUnknown.
func StatusOf(p Provider, state string) Status {
	if s, ok := providerStates[p][state]; ok {
		return s
	}
	return StatusUnknown
}

// CreateOpts are adapter-specific creation parameters, passed through
// unchanged (image, resources, lifetime, ...). Each adapter documents the keys
// it reads and rejects any other key with an *InvalidError; a nil map is the
// adapter's defaults.
type CreateOpts struct {
	Params map[string]string `json:"params,omitempty"`
	// Lease is recorded on the sandbox by adapters that are Leasers, on a
	// new sandbox and on one Create adopts; the runtime sets it to its own
	// identity and lease. Zero = none.
	Lease Lease `json:"lease,omitzero"`
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
	// Lease is recorded on the new sandbox, as CreateOpts.Lease.
	Lease Lease
}

// Validate validates o and returns it with defaults filled in. A bad timeout is
// an *InvalidError with detail create_timeout.
func (o CreateNewOpts) Validate() (CreateNewOpts, error) {
	var err error
	o.Timeout, err = boundedTimeout(o.Timeout, DefaultCreateNewTimeout, MaxCreateNewTimeout, DetailCreateTimeout)
	return o, err
}

// ValidateCreateNew validates a CreateNew call in the contract's order
// (the options, then the name) and returns the options with defaults
// filled in.
func ValidateCreateNew(name string, o CreateNewOpts) (CreateNewOpts, error) {
	o, err := o.Validate()
	if err != nil {
		return o, err
	}
	return o, ValidateSandboxName(name)
}

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
	var err error
	o.Timeout, err = boundedTimeout(o.Timeout, DefaultDestroyOnceTimeout, MaxDestroyOnceTimeout, DetailDeleteTimeout)
	return o, err
}

// Bound validates o and returns ctx bounded by its timeout, the one
// deadline of a DestroyOnce attempt; cancel must be called when err is nil.
func (o DestroyOnceOpts) Bound(ctx context.Context) (bounded context.Context, cancel context.CancelFunc, err error) {
	if o, err = o.Validate(); err != nil {
		return nil, nil, err
	}
	bounded, cancel = context.WithTimeout(ctx, *o.Timeout)
	return bounded, cancel, nil
}

// NetworkPolicy is a sandbox's complete egress allow list. An empty (or nil)
// Allow means deny all egress, never "no policy". Entries are domain rules: a
// host name such as "api.example.com", or a wildcard such as "*.github.com".
type NetworkPolicy struct {
	Allow []string `json:"allow"`
}

// Validate reports an *InvalidError with detail network_policy naming the
// first entry that is not a domain rule.
func (p NetworkPolicy) Validate() error {
	for _, d := range p.Allow {
		if !validDomainRule(d) {
			return &InvalidError{Detail: DetailNetworkPolicy + ": not a domain rule: " + d}
		}
	}
	return nil
}

// validDomainRule reports whether d is a host name of labels [A-Za-z0-9-]
// (1..63 bytes, no leading or trailing '-'), at most 253 bytes, optionally
// preceded by "*.".
func validDomainRule(d string) bool {
	d = strings.TrimPrefix(d, "*.")
	if d == "" || len(d) > 253 {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// Checkpoint is one saved state of a sandbox, as a provider's listing
// reports it. IDs come from listings, never from progress prose.
type Checkpoint struct {
	ID        string    `json:"id"`
	Comment   string    `json:"comment,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	// Memory says the checkpoint holds the machine's memory (its running
	// processes) as well as its files; false: files only, so a restore or
	// a fork starts with no command running.
	Memory bool `json:"memory,omitempty"`
	// Size is the bytes it holds, where the provider says (0: not said).
	Size int64 `json:"size,omitempty"`
}

// ForkOpts are the options of Fork.
type ForkOpts struct {
	// Lease is the new sandbox's first lease (the zero Lease: the
	// adapter's owner, no end), as CreateOpts.Lease.
	Lease Lease
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
	var err error
	if o.Timeout, err = boundedTimeout(o.Timeout, DefaultCheckpointOnceTimeout, MaxCheckpointOnceTimeout, DetailCheckpointTimeout); err != nil {
		return o, err
	}
	if err := ValidateOperationID(o.OperationID); err != nil {
		return o, err
	}
	return o, nil
}

// CheckpointComment is the comment CreateCheckpointOnce attaches so that the
// checkpoint can be found again by its operation id.
func CheckpointComment(operationID string) string { return "sandbox-operation:" + operationID }

// Preview is a sandbox port exposed over HTTP: URL is where to send
// requests, Token authorises them and is only ever sent as a header (never
// in the URL), ExpiresAt bounds it. Revoke ends it earlier.
type Preview struct {
	URL       string    `json:"url"`
	Port      int       `json:"port"`
	Token     Secret    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Authorize sets the preview's credential on req as a bearer token.
func (p Preview) Authorize(req *http.Request) {
	req.Header.Set("Authorization", "Bearer "+p.Token.Reveal())
}

// Bounds of ExposeOpts.TTL.
const (
	DefaultPreviewTTL = 10 * time.Minute
	MaxPreviewTTL     = 24 * time.Hour
)

// ExposeOpts are the options of exposing a port as a preview.
type ExposeOpts struct {
	TTL time.Duration // how long the token is valid: 0 = 10 minutes; at most 24 hours
}

// ValidateExpose checks a port and options before any provider access and
// returns the options with defaults filled in, or an *InvalidError with
// detail expose_options.
func ValidateExpose(port int, o ExposeOpts) (ExposeOpts, error) {
	if port < 1 || port > 65535 {
		return o, &InvalidError{Detail: DetailExposeOptions + ": port outside 1..65535"}
	}
	switch {
	case o.TTL == 0:
		o.TTL = DefaultPreviewTTL
	case o.TTL < 0 || o.TTL > MaxPreviewTTL:
		return o, &InvalidError{Detail: DetailExposeOptions + ": ttl outside (0, 24h]"}
	}
	return o, nil
}

// ValidatePath validates a file path inside a sandbox, the one rule of
// every adapter: absolute, with no NUL byte, no ".." element, and within
// MaxPathLen and MaxNameLen.
func ValidatePath(path string) error {
	switch {
	case strings.IndexByte(path, 0) >= 0:
		return &InvalidError{Detail: DetailPath + ": a NUL byte is not allowed"}
	case !strings.HasPrefix(path, "/"):
		return &InvalidError{Detail: DetailPath + ": must be absolute"}
	case len(path) > MaxPathLen:
		return &InvalidError{Detail: fmt.Sprintf("%s: longer than %d bytes", DetailPath, MaxPathLen)}
	}
	for _, elem := range strings.Split(path, "/") {
		switch {
		case elem == "..":
			return &InvalidError{Detail: DetailPath + ": .. is not allowed"}
		case len(elem) > MaxNameLen:
			return &InvalidError{Detail: fmt.Sprintf("%s: a name longer than %d bytes", DetailPath, MaxNameLen)}
		}
	}
	return nil
}

// The longest path, and the longest name in it, a sandbox file may have
// (Linux's PATH_MAX and NAME_MAX): a longer one is invalid(path) on every
// adapter, before any provider sees it.
const (
	MaxPathLen = 4096
	MaxNameLen = 255
)

// OperationIDPattern is the syntax of the operation id hosts give
// CreateCheckpointOnce, from their durable intent.
const (
	OperationIDPattern = `^[A-Za-z0-9_-]{1,128}$`
	maxOperationIDLen  = 128
)

// ValidateOperationID answers an *InvalidError with detail
// checkpoint_operation_id unless id matches OperationIDPattern.
func ValidateOperationID(id string) error {
	if !isToken(id, maxOperationIDLen) {
		return &InvalidError{Detail: DetailCheckpointOperationID}
	}
	return nil
}

// Defaults of CheckpointLimits, for the adapters that keep checkpoints
// themselves (local, docker).
const (
	DefaultMaxCheckpoints      = 64
	DefaultMaxCheckpointBytes  = 16 << 30
	DefaultCheckpointRetention = 24 * time.Hour
)

// CheckpointLimits bound the checkpoints an adapter keeps itself; zero
// fields take the defaults. A checkpoint past MaxCount or MaxBytes (over
// all its sandboxes) is refused invalid(checkpoint_limit). A checkpoint
// whose sandbox is gone is removed once Retention has passed since (so a
// fork can still start from it meanwhile); a negative Retention keeps
// them until they are deleted.
type CheckpointLimits struct {
	MaxCount  int
	MaxBytes  int64
	Retention time.Duration
}

// WithDefaults returns l with its zero fields set to the defaults, or an
// *InvalidError for a negative count or size.
func (l CheckpointLimits) WithDefaults() (CheckpointLimits, error) {
	if l.MaxCount < 0 || l.MaxBytes < 0 {
		return l, &InvalidError{Detail: "checkpoint limits must not be negative"}
	}
	if l.MaxCount == 0 {
		l.MaxCount = DefaultMaxCheckpoints
	}
	if l.MaxBytes == 0 {
		l.MaxBytes = DefaultMaxCheckpointBytes
	}
	if l.Retention == 0 {
		l.Retention = DefaultCheckpointRetention
	}
	return l, nil
}
