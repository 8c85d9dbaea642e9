package paddock

import (
	"context"
	"io"
	"io/fs"
	"time"
)

// Adapter is one provider's implementation of the contract: the required
// operations (docs/contract.md#required-and-optional), each blocking until done, with ctx first, and
// answering errors from the taxonomy only. An adapter never panics on a
// documented failure, never sends actor messages, and works on a Handle
// rebuilt by BuildHandle alone.
//
// Optional operations (network policy, public URL, checkpoints, one-shot
// creation and deletion, session termination, previews) are the small
// interfaces in optional.go; the facade helpers there find them by type
// assertion, check the capability, and never fall back to a required one.
type Adapter interface {
	// Provider is the tag this adapter puts on the handles it builds.
	Provider() Provider
	// Capabilities is the set of promises the adapter makes now; it may
	// depend on configuration and is read on every call.
	Capabilities() CapabilitySet
	// BuildHandle returns {Provider(), name} with no I/O.
	BuildHandle(name string) Handle

	// Create makes the sandbox called name, or adopts it if it exists; it
	// never answers ErrAlreadyExists.
	Create(ctx context.Context, name string, opts CreateOpts) (Handle, error)
	// Get reports the sandbox's status. ErrNotFound means definitely
	// absent; anything transient is a different error.
	Get(ctx context.Context, h Handle) (Info, error)
	// Destroy removes the sandbox; an absent one is success. After it, Get
	// answers ErrNotFound.
	Destroy(ctx context.Context, h Handle) error
	// ListAllNames returns every sandbox name of the account, or
	// ErrTruncated; never a partial list that looks whole.
	ListAllNames(ctx context.Context) ([]string, error)
	// Suspend parks the sandbox (a no-op where the platform parks on its
	// own).
	Suspend(ctx context.Context, h Handle) error
	// Resume wakes the sandbox and returns a handle on which Get succeeds.
	Resume(ctx context.Context, h Handle) (Handle, error)

	// WriteFile streams r into path, creating parent directories, with the
	// permission bits of mode.
	WriteFile(ctx context.Context, h Handle, path string, mode fs.FileMode, r io.Reader) error
	// ReadFile streams the file at path; ErrNotFound when it is absent.
	ReadFile(ctx context.Context, h Handle, path string) (io.ReadCloser, error)

	// Exec runs cmd to completion. A nonzero exit is data; an error means
	// the command could not run or its outcome is unknown.
	Exec(ctx context.Context, h Handle, cmd Cmd, opts ExecOpts) (ExecResult, error)
	// Spawn starts cmd and returns its stream once stdin can be written.
	Spawn(ctx context.Context, h Handle, cmd Cmd, opts SpawnOpts) (Stream, error)
	// ListSessions lists the sandbox's detachable sessions, finished ones
	// included, whoever is attached.
	ListSessions(ctx context.Context, h Handle) ([]Session, error)
	// Attach rejoins a session: its output from byte zero, then live output,
	// or the recorded terminal event if it ended. ErrNotFound for an
	// unknown session or sandbox.
	Attach(ctx context.Context, h Handle, sessionID string, opts AttachOpts) (Stream, error)
}

// Optional operations (docs/contract.md#required-and-optional). An adapter implements the ones it
// offers; the helpers below are the one place that finds them, and answer
// ErrNotSupported when the method (or, where the contract asks, the
// capability) is missing. None of them ever falls back to a required
// operation. Each validates its options first, before any capability check
// or provider access.

// CreateNewer is implemented by adapters offering CapCreateNew.
type CreateNewer interface {
	// CreateNew makes one creation attempt that never adopts: an existing
	// name is ErrAlreadyExists (or invalid where the provider cannot tell);
	// success carries a non-empty InstanceID. opts arrive resolved.
	CreateNew(ctx context.Context, name string, opts CreateNewOpts) (Handle, error)
}

// DestroyOncer is implemented by adapters offering CapDestroyOnce.
type DestroyOncer interface {
	// DestroyOnce makes one bounded deletion attempt, with no retries; nil
	// only when the provider confirmed absence. opts arrive resolved.
	DestroyOnce(ctx context.Context, h Handle, opts DestroyOnceOpts) error
}

// CheckpointOncer is implemented by adapters offering
// CapCreateCheckpointOnce.
type CheckpointOncer interface {
	// CreateCheckpointOnce makes one bounded checkpoint tied to
	// opts.OperationID and returns its id. opts arrive resolved.
	CreateCheckpointOnce(ctx context.Context, h Handle, opts CheckpointOnceOpts) (string, error)
}

// PolicyApplier is implemented by adapters offering CapNetworkPolicy.
type PolicyApplier interface {
	// ApplyNetworkPolicy applies the complete egress policy; an empty
	// allow list denies all egress and must reach the provider. p arrives
	// validated.
	ApplyNetworkPolicy(ctx context.Context, h Handle, p NetworkPolicy) error
}

// PublicURLer is implemented by adapters offering CapPublicURL.
type PublicURLer interface {
	// PublicURL returns an http(s) URL a browser can open without a
	// platform credential, or ErrNoPublicURL when the provider has none on
	// record.
	PublicURL(ctx context.Context, h Handle) (string, error)
}

// Checkpointer is implemented by adapters offering CapCheckpoint (which
// may depend on configuration: the helpers read it on every call).
type Checkpointer interface {
	// CreateCheckpoint saves the sandbox and returns the checkpoint's id,
	// as the provider's listing names it.
	CreateCheckpoint(ctx context.Context, h Handle, opts CheckpointOpts) (string, error)
	// RestoreCheckpoint restores a checkpoint; a failure the provider
	// reports (even inside an otherwise successful answer) is a
	// *RestoreFailedError.
	RestoreCheckpoint(ctx context.Context, h Handle, checkpointID string) error
	// ListCheckpoints lists the sandbox's checkpoints.
	ListCheckpoints(ctx context.Context, h Handle) ([]Checkpoint, error)
}

// CheckpointDeleter is implemented by adapters that remove checkpoints
// (alongside CapCheckpoint).
type CheckpointDeleter interface {
	// DeleteCheckpoint removes one of the sandbox's checkpoints; an absent
	// one is success.
	DeleteCheckpoint(ctx context.Context, h Handle, checkpointID string) error
}

// Forker is implemented by adapters offering CapFork.
type Forker interface {
	// Fork makes a new sandbox named name from the checkpoint checkpointID
	// of h's sandbox, holding that checkpoint's content; h's sandbox is
	// untouched. A taken name is already_exists, an unknown checkpoint
	// not_found. Arguments arrive validated.
	Fork(ctx context.Context, h Handle, checkpointID, name string, opts ForkOpts) (Handle, error)
}

// SessionTerminator is implemented by adapters offering CapTerminateSession.
type SessionTerminator interface {
	// TerminateSession stops one session without touching the sandbox or
	// other sessions; nil requires provider confirmation, or definite
	// absence in graceful mode. opts arrive validated with defaults.
	TerminateSession(ctx context.Context, h Handle, sessionID string, opts TerminateOpts) error
}

// Exposer is implemented by adapters offering CapExpose.
type Exposer interface {
	// Expose makes port reachable as a signed, expiring Preview.
	Expose(ctx context.Context, h Handle, port int, opts ExposeOpts) (Preview, error)
	// Revoke ends a preview before its expiry.
	Revoke(ctx context.Context, h Handle, p Preview) error
}

// HostPather is implemented by adapters whose processes see paths
// differently from the caller (a self-hosted runner, say).
type HostPather interface {
	HostPath(h Handle, path string) string
}

// CreateNew validates opts and calls a's CreateNew, or answers
// ErrNotSupported when a has none (never Create instead).
func CreateNew(ctx context.Context, a Adapter, name string, opts CreateNewOpts) (Handle, error) {
	opts, err := ValidateCreateNew(name, opts)
	if err != nil {
		return Handle{}, err
	}
	cn, ok := a.(CreateNewer)
	if !ok {
		return Handle{}, ErrNotSupported
	}
	return cn.CreateNew(ctx, name, opts)
}

// DestroyOnce validates opts and calls a's DestroyOnce, or answers
// ErrNotSupported when a has none (never Destroy instead).
func DestroyOnce(ctx context.Context, a Adapter, h Handle, opts DestroyOnceOpts) error {
	opts, err := opts.Validate()
	if err != nil {
		return err
	}
	d, ok := a.(DestroyOncer)
	if !ok {
		return ErrNotSupported
	}
	return d.DestroyOnce(ctx, h, opts)
}

// CreateCheckpointOnce validates opts and calls a's CreateCheckpointOnce, or
// answers ErrNotSupported when a has none (never CreateCheckpoint instead).
// The adapter itself refuses while checkpoint creation is disabled.
func CreateCheckpointOnce(ctx context.Context, a Adapter, h Handle, opts CheckpointOnceOpts) (string, error) {
	opts, err := opts.Validate()
	if err != nil {
		return "", err
	}
	c, ok := a.(CheckpointOncer)
	if !ok {
		return "", ErrNotSupported
	}
	return c.CreateCheckpointOnce(ctx, h, opts)
}

// ApplyNetworkPolicy validates p and applies it through a's PolicyApplier
// when a advertises CapNetworkPolicy; otherwise ErrNotSupported: a policy
// is never silently dropped.
func ApplyNetworkPolicy(ctx context.Context, a Adapter, h Handle, p NetworkPolicy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	pa, ok := a.(PolicyApplier)
	if !ok || !Supports(a, CapNetworkPolicy) {
		return ErrNotSupported
	}
	return pa.ApplyNetworkPolicy(ctx, h, p)
}

// PublicURL returns the sandbox's URL through a's PublicURLer when a
// advertises CapPublicURL; otherwise ErrNoPublicURL, never a guess.
func PublicURL(ctx context.Context, a Adapter, h Handle) (string, error) {
	pu, ok := a.(PublicURLer)
	if !ok || !Supports(a, CapPublicURL) {
		return "", ErrNoPublicURL
	}
	return pu.PublicURL(ctx, h)
}

// checkpointer returns a's Checkpointer while a advertises CapCheckpoint;
// otherwise ErrNotSupported, without touching the provider.
func checkpointer(a Adapter) (Checkpointer, error) {
	c, ok := a.(Checkpointer)
	if !ok || !Supports(a, CapCheckpoint) {
		return nil, ErrNotSupported
	}
	return c, nil
}

// CreateCheckpoint saves the sandbox through a's Checkpointer, or answers
// ErrNotSupported without CapCheckpoint.
func CreateCheckpoint(ctx context.Context, a Adapter, h Handle, opts CheckpointOpts) (string, error) {
	c, err := checkpointer(a)
	if err != nil {
		return "", err
	}
	return c.CreateCheckpoint(ctx, h, opts)
}

// RestoreCheckpoint restores a checkpoint through a's Checkpointer, or
// answers ErrNotSupported without CapCheckpoint.
func RestoreCheckpoint(ctx context.Context, a Adapter, h Handle, checkpointID string) error {
	c, err := checkpointer(a)
	if err != nil {
		return err
	}
	return c.RestoreCheckpoint(ctx, h, checkpointID)
}

// ListCheckpoints lists checkpoints through a's Checkpointer, or answers
// ErrNotSupported without CapCheckpoint.
func ListCheckpoints(ctx context.Context, a Adapter, h Handle) ([]Checkpoint, error) {
	c, err := checkpointer(a)
	if err != nil {
		return nil, err
	}
	return c.ListCheckpoints(ctx, h)
}

// DeleteCheckpoint removes a checkpoint through a's CheckpointDeleter, or
// answers ErrNotSupported without CapCheckpoint or the method.
func DeleteCheckpoint(ctx context.Context, a Adapter, h Handle, checkpointID string) error {
	if _, err := checkpointer(a); err != nil {
		return err
	}
	d, ok := a.(CheckpointDeleter)
	if !ok {
		return ErrNotSupported
	}
	if checkpointID == "" {
		return &InvalidError{Detail: DetailCheckpointID}
	}
	return d.DeleteCheckpoint(ctx, h, checkpointID)
}

// Fork validates the new name and the checkpoint id, then makes a new
// sandbox from the checkpoint through a's Forker, or answers
// ErrNotSupported without CapFork.
func Fork(ctx context.Context, a Adapter, h Handle, checkpointID, name string, opts ForkOpts) (Handle, error) {
	f, ok := a.(Forker)
	if !ok || !Supports(a, CapFork) {
		return Handle{}, ErrNotSupported
	}
	for _, n := range []string{h.Name, name} { // the source, and the new sandbox
		if err := ValidateSandboxName(n); err != nil {
			return Handle{}, err
		}
	}
	if checkpointID == "" {
		return Handle{}, &InvalidError{Detail: DetailCheckpointID}
	}
	return f.Fork(ctx, h, checkpointID, name, opts)
}

// TerminateSession applies the facade's order of checks
// (docs/contract.md#op-terminate-session):
// validation (ErrTerminationRequest), then CapTerminateSession and the
// method, then CapForceTerminateSession for force mode (ErrNotSupported
// without calling the adapter), then the adapter.
func TerminateSession(ctx context.Context, a Adapter, h Handle, sessionID string, opts TerminateOpts) error {
	opts, err := ValidateTermination(sessionID, opts)
	if err != nil {
		return err
	}
	st, ok := a.(SessionTerminator)
	if !ok || !Supports(a, CapTerminateSession) {
		return ErrNotSupported
	}
	if opts.Mode == TerminateForce && !Supports(a, CapForceTerminateSession) {
		return ErrNotSupported
	}
	return st.TerminateSession(ctx, h, sessionID, opts)
}

// Expose validates the port and options and calls a's Expose when a
// advertises CapExpose and has the method; otherwise ErrNotSupported.
func Expose(ctx context.Context, a Adapter, h Handle, port int, opts ExposeOpts) (Preview, error) {
	opts, err := ValidateExpose(port, opts)
	if err != nil {
		return Preview{}, err
	}
	e, ok := a.(Exposer)
	if !ok || !Supports(a, CapExpose) {
		return Preview{}, ErrNotSupported
	}
	return e.Expose(ctx, h, port, opts)
}

// Revoke calls a's Revoke when a advertises CapExpose and has the method;
// otherwise ErrNotSupported.
func Revoke(ctx context.Context, a Adapter, h Handle, p Preview) error {
	e, ok := a.(Exposer)
	if !ok || !Supports(a, CapExpose) {
		return ErrNotSupported
	}
	return e.Revoke(ctx, h, p)
}

// HostPath maps an in-sandbox path through a's HostPath, or returns it
// unchanged when a has none.
func HostPath(a Adapter, h Handle, path string) string {
	if hp, ok := a.(HostPather); ok {
		return hp.HostPath(h, path)
	}
	return path
}

// Heartbeater is implemented by adapters whose sandboxes expire unless they
// are kept alive while in use (a provider-side TTL). The runtime calls
// Heartbeat every HeartbeatInterval while a sandbox has live commands or
// saw a request since the previous beat, and never once it lets go.
type Heartbeater interface {
	// HeartbeatInterval is how often a sandbox in use needs a heartbeat,
	// well inside its expiry; 0 = none needed.
	HeartbeatInterval() time.Duration
	// Heartbeat pushes the sandbox's expiry ahead from now. A failure is
	// logged by the runtime and never affects commands.
	Heartbeat(ctx context.Context, h Handle) error
}
