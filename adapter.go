package paddock

import (
	"context"
	"io"
	"io/fs"
)

// Adapter is one provider's implementation of the contract: the required
// operations of contract 1.3, each blocking until done, with ctx first, and
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
