package actors

import (
	"context"
	"io"
	"io/fs"
	"sync/atomic"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
)

// View is one provider seen through the runtime as a paddock.Adapter: every
// call travels through the actors (and their guards), and streams are
// plain-Go Streams. It lets anything written against the contract, the
// conformance suite first, run on the runtime unchanged.
type View struct {
	rt *Runtime
	p  paddock.Provider
}

// View returns provider p through the runtime.
func (rt *Runtime) View(p paddock.Provider) *View { return &View{rt: rt, p: p} }

// The view offers every optional interface; the runtime answers
// ErrNotSupported (ErrNoPublicURL for PublicURL) where the adapter behind it
// has none.
var (
	_ paddock.Adapter           = (*View)(nil)
	_ paddock.CreateNewer       = (*View)(nil)
	_ paddock.DestroyOncer      = (*View)(nil)
	_ paddock.CheckpointOncer   = (*View)(nil)
	_ paddock.PolicyApplier     = (*View)(nil)
	_ paddock.PublicURLer       = (*View)(nil)
	_ paddock.Checkpointer      = (*View)(nil)
	_ paddock.SessionTerminator = (*View)(nil)
	_ paddock.Exposer           = (*View)(nil)
	_ paddock.FileManager       = (*View)(nil)
	_ paddock.HostPather        = (*View)(nil)
)

// Provider is the provider the view dispatches to.
func (v *View) Provider() paddock.Provider { return v.p }

// Capabilities are the adapter's, read on every call.
func (v *View) Capabilities() paddock.CapabilitySet {
	caps, _ := v.rt.Capabilities(v.p) // an unknown provider advertises nothing
	return caps
}

// BuildHandle builds through the adapter; for an unknown provider it tags
// the handle with the view's provider, so every call then fails loudly.
func (v *View) BuildHandle(name string) paddock.Handle {
	h, err := v.rt.BuildHandle(v.p, name)
	if err != nil {
		return paddock.Handle{Provider: v.p, Name: name}
	}
	return h
}

func (v *View) Create(ctx context.Context, name string, o paddock.CreateOpts) (paddock.Handle, error) {
	return v.rt.Create(ctx, v.p, name, o)
}
func (v *View) CreateNew(ctx context.Context, name string, o paddock.CreateNewOpts) (paddock.Handle, error) {
	return v.rt.CreateNew(ctx, v.p, name, o)
}
func (v *View) Get(ctx context.Context, h paddock.Handle) (paddock.Info, error) {
	return v.rt.Get(ctx, h)
}
func (v *View) Destroy(ctx context.Context, h paddock.Handle) error { return v.rt.Destroy(ctx, h) }
func (v *View) DestroyOnce(ctx context.Context, h paddock.Handle, o paddock.DestroyOnceOpts) error {
	return v.rt.DestroyOnce(ctx, h, o)
}
func (v *View) ListAllNames(ctx context.Context) ([]string, error) {
	return v.rt.ListAllNames(ctx, v.p)
}
func (v *View) Suspend(ctx context.Context, h paddock.Handle) error { return v.rt.Suspend(ctx, h) }
func (v *View) Resume(ctx context.Context, h paddock.Handle) (paddock.Handle, error) {
	return v.rt.Resume(ctx, h)
}
func (v *View) WriteFile(ctx context.Context, h paddock.Handle, path string, mode fs.FileMode, r io.Reader) error {
	return v.rt.WriteFile(ctx, h, path, mode, r)
}
func (v *View) ReadFile(ctx context.Context, h paddock.Handle, path string) (io.ReadCloser, error) {
	return v.rt.ReadFile(ctx, h, path)
}
func (v *View) Exec(ctx context.Context, h paddock.Handle, c paddock.Cmd, o paddock.ExecOpts) (paddock.ExecResult, error) {
	return v.rt.Exec(ctx, h, c, o)
}
func (v *View) Spawn(ctx context.Context, h paddock.Handle, c paddock.Cmd, o paddock.SpawnOpts) (paddock.Stream, error) {
	s, err := v.rt.Spawn(ctx, h, c, o)
	if err != nil {
		return nil, err
	}
	return StreamOf(s), nil
}
func (v *View) ListSessions(ctx context.Context, h paddock.Handle) ([]paddock.Session, error) {
	return v.rt.ListSessions(ctx, h)
}
func (v *View) Attach(ctx context.Context, h paddock.Handle, id string, o paddock.AttachOpts) (paddock.Stream, error) {
	s, err := v.rt.Attach(ctx, h, id, o)
	if err != nil {
		return nil, err
	}
	return StreamOf(s), nil
}
func (v *View) TerminateSession(ctx context.Context, h paddock.Handle, id string, o paddock.TerminateOpts) error {
	return v.rt.TerminateSession(ctx, h, id, o)
}
func (v *View) ApplyNetworkPolicy(ctx context.Context, h paddock.Handle, p paddock.NetworkPolicy) error {
	return v.rt.ApplyNetworkPolicy(ctx, h, p)
}
func (v *View) PublicURL(ctx context.Context, h paddock.Handle) (string, error) {
	return v.rt.PublicURL(ctx, h)
}
func (v *View) CreateCheckpoint(ctx context.Context, h paddock.Handle, o paddock.CheckpointOpts) (string, error) {
	return v.rt.CreateCheckpoint(ctx, h, o)
}
func (v *View) CreateCheckpointOnce(ctx context.Context, h paddock.Handle, o paddock.CheckpointOnceOpts) (string, error) {
	return v.rt.CreateCheckpointOnce(ctx, h, o)
}
func (v *View) RestoreCheckpoint(ctx context.Context, h paddock.Handle, id string) error {
	return v.rt.RestoreCheckpoint(ctx, h, id)
}
func (v *View) ListCheckpoints(ctx context.Context, h paddock.Handle) ([]paddock.Checkpoint, error) {
	return v.rt.ListCheckpoints(ctx, h)
}
func (v *View) ListDir(ctx context.Context, h paddock.Handle, path string) ([]paddock.FileInfo, error) {
	return v.rt.ListDir(ctx, h, path)
}
func (v *View) Stat(ctx context.Context, h paddock.Handle, path string) (paddock.FileInfo, error) {
	return v.rt.Stat(ctx, h, path)
}
func (v *View) Remove(ctx context.Context, h paddock.Handle, path string, o paddock.RemoveOpts) error {
	return v.rt.Remove(ctx, h, path, o)
}
func (v *View) Rename(ctx context.Context, h paddock.Handle, from, to string) error {
	return v.rt.Rename(ctx, h, from, to)
}
func (v *View) MakeDir(ctx context.Context, h paddock.Handle, path string, o paddock.MakeDirOpts) error {
	return v.rt.MakeDir(ctx, h, path, o)
}
func (v *View) Expose(ctx context.Context, h paddock.Handle, port int, o paddock.ExposeOpts) (paddock.Preview, error) {
	return v.rt.Expose(ctx, h, port, o)
}
func (v *View) Revoke(ctx context.Context, h paddock.Handle, p paddock.Preview) error {
	return v.rt.Revoke(ctx, h, p)
}
func (v *View) Watch(ctx context.Context, h paddock.Handle, path string) (paddock.FileWatch, error) {
	s, err := v.rt.Watch(ctx, h, path)
	if err != nil {
		return nil, err
	}
	return paddock.WatchOf(StreamOf(s)), nil
}
func (v *View) HostPath(h paddock.Handle, path string) string {
	out, err := v.rt.HostPath(h, path)
	if err != nil {
		return path
	}
	return out
}

// EventOf turns a frame into the stream event it stands for.
func EventOf(f messages.Frame) paddock.Event { return wire.EventOf(f) }

// StreamOf presents a plain-Go Stream as a paddock.Stream.
func StreamOf(s *FrameStream) paddock.Stream { return &streamView{s: s} }

type streamView struct {
	s      *FrameStream
	done   bool
	closed atomic.Bool
}

func (v *streamView) Next(ctx context.Context) (paddock.Event, error) {
	if v.done || v.closed.Load() {
		return paddock.Event{}, io.EOF
	}
	select {
	case f, ok := <-v.s.C():
		if !ok {
			v.done = true
			return paddock.Event{}, io.EOF
		}
		if v.closed.Load() {
			return paddock.Event{}, io.EOF
		}
		ev := EventOf(f)
		v.done = ev.Kind.Terminal()
		return ev, nil
	case <-ctx.Done():
		return paddock.Event{}, ctx.Err()
	}
}
func (v *streamView) WriteStdin(ctx context.Context, p []byte) error { return v.s.WriteStdin(ctx, p) }
func (v *streamView) CloseStdin(ctx context.Context) error           { return v.s.CloseStdin(ctx) }
func (v *streamView) Signal(ctx context.Context, sig paddock.Signal) error {
	return v.s.Signal(ctx, sig)
}
func (v *streamView) Resize(ctx context.Context, size paddock.TermSize) error {
	return v.s.Resize(ctx, size)
}
func (v *streamView) Close() error {
	v.closed.Store(true)
	return v.s.Close()
}
func (v *streamView) SessionID() string { return v.s.SessionID() }
