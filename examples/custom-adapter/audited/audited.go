// Package audited is a minimal Paddock adapter for a made-up provider,
// "audited": it keeps its sandboxes on another adapter and writes one
// audit line per operation (the operation and the sandbox's name, never
// a command line, an environment or a file's content). It follows the
// guide in package conformance's documentation, and its test proves it
// with conformance.Run.
package audited

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"time"

	"github.com/paddockhq/paddock"
)

// Provider is this adapter's tag on the handles it builds.
const Provider paddock.Provider = "audited"

// Adapter is the audited provider over an inner adapter. It is safe for
// concurrent use.
type Adapter struct {
	inner paddock.Adapter
	mu    sync.Mutex // one audit line at a time
	log   io.Writer
	now   func() time.Time
}

var _ interface {
	paddock.Adapter
	paddock.SessionTerminator
} = (*Adapter)(nil)

// New returns the audited provider keeping its sandboxes on inner and
// writing its audit lines to log.
func New(inner paddock.Adapter, log io.Writer) *Adapter {
	return &Adapter{inner: inner, log: log, now: time.Now}
}

// passThrough are the capabilities this adapter keeps from its inner
// adapter: those of the required operations and of streams (passed on
// unchanged), and session termination, which it implements. Anything
// else needs an optional method this adapter does not have, so it is not
// promised, and the facade answers not_supported for it.
var passThrough = []paddock.Capability{paddock.CapSuspend, paddock.CapAttach, paddock.CapTTY, paddock.CapNamedSpawn,
	paddock.CapSignal, paddock.CapResize, paddock.CapTerminateSession, paddock.CapForceTerminateSession}

// Capabilities are the inner adapter's, as far as this one passes them on.
func (a *Adapter) Capabilities() paddock.CapabilitySet {
	inner := a.inner.Capabilities()
	var caps []paddock.Capability
	for _, c := range passThrough {
		if inner.Has(c) {
			caps = append(caps, c)
		}
	}
	return paddock.NewCapabilitySet(caps...)
}

// Provider returns "audited".
func (a *Adapter) Provider() paddock.Provider { return Provider }

// BuildHandle returns {audited, name}: pure, as the guide's first rule
// asks.
func (a *Adapter) BuildHandle(name string) paddock.Handle {
	return paddock.Handle{Provider: Provider, Name: name}
}

// audit writes one line.
func (a *Adapter) audit(op, sandbox string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fmt.Fprintf(a.log, "%s %s %s\n", a.now().UTC().Format(time.RFC3339), op, sandbox)
}

// down is h as the inner adapter knows it; up is an inner handle as ours.
func (a *Adapter) down(h paddock.Handle) paddock.Handle {
	h.Provider = a.inner.Provider()
	return h
}

func up(h paddock.Handle) paddock.Handle {
	h.Provider = Provider
	return h
}

func (a *Adapter) Create(ctx context.Context, name string, opts paddock.CreateOpts) (paddock.Handle, error) {
	a.audit("create", name)
	h, err := a.inner.Create(ctx, name, opts)
	return up(h), err
}

func (a *Adapter) Get(ctx context.Context, h paddock.Handle) (paddock.Info, error) {
	return a.inner.Get(ctx, a.down(h))
}

func (a *Adapter) Destroy(ctx context.Context, h paddock.Handle) error {
	a.audit("destroy", h.Name)
	return a.inner.Destroy(ctx, a.down(h))
}

func (a *Adapter) ListAllNames(ctx context.Context) ([]string, error) {
	return a.inner.ListAllNames(ctx)
}

func (a *Adapter) Suspend(ctx context.Context, h paddock.Handle) error {
	a.audit("suspend", h.Name)
	return a.inner.Suspend(ctx, a.down(h))
}

func (a *Adapter) Resume(ctx context.Context, h paddock.Handle) (paddock.Handle, error) {
	a.audit("resume", h.Name)
	h, err := a.inner.Resume(ctx, a.down(h))
	return up(h), err
}

func (a *Adapter) WriteFile(ctx context.Context, h paddock.Handle, path string, mode fs.FileMode, r io.Reader) error {
	a.audit("write_file", h.Name)
	return a.inner.WriteFile(ctx, a.down(h), path, mode, r)
}

func (a *Adapter) ReadFile(ctx context.Context, h paddock.Handle, path string) (io.ReadCloser, error) {
	a.audit("read_file", h.Name)
	return a.inner.ReadFile(ctx, a.down(h), path)
}

func (a *Adapter) Exec(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.ExecOpts) (paddock.ExecResult, error) {
	a.audit("exec", h.Name)
	return a.inner.Exec(ctx, a.down(h), cmd, opts)
}

// Spawn's stream is the inner adapter's, unchanged: its events, its
// terminal event and its signals are the inner adapter's promises.
func (a *Adapter) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts) (paddock.Stream, error) {
	a.audit("spawn", h.Name)
	return a.inner.Spawn(ctx, a.down(h), cmd, opts)
}

func (a *Adapter) ListSessions(ctx context.Context, h paddock.Handle) ([]paddock.Session, error) {
	return a.inner.ListSessions(ctx, a.down(h))
}

func (a *Adapter) Attach(ctx context.Context, h paddock.Handle, sessionID string, opts paddock.AttachOpts) (paddock.Stream, error) {
	a.audit("attach", h.Name)
	return a.inner.Attach(ctx, a.down(h), sessionID, opts)
}

// TerminateSession goes through the facade on the inner adapter, which
// answers not_supported where that one cannot terminate.
func (a *Adapter) TerminateSession(ctx context.Context, h paddock.Handle, sessionID string, opts paddock.TerminateOpts) error {
	a.audit("terminate_session", h.Name)
	return paddock.TerminateSession(ctx, a.inner, a.down(h), sessionID, opts)
}
