package paddock_test

import (
	"context"
	"io"
	"io/fs"

	"github.com/paddockhq/paddock"
)

// stubAdapter implements only the required operations, answering
// ErrNotSupported, and records which operation reached it.
type stubAdapter struct {
	caps  paddock.CapabilitySet
	calls []string
}

var _ paddock.Adapter = (*stubAdapter)(nil)

func (s *stubAdapter) called(op string) error { s.calls = append(s.calls, op); return nil }

func (s *stubAdapter) Provider() paddock.Provider          { return "stub" }
func (s *stubAdapter) Capabilities() paddock.CapabilitySet { return s.caps }
func (s *stubAdapter) BuildHandle(name string) paddock.Handle {
	return paddock.Handle{Provider: "stub", Name: name}
}
func (s *stubAdapter) Create(context.Context, string, paddock.CreateOpts) (paddock.Handle, error) {
	return paddock.Handle{}, paddock.ErrNotSupported
}
func (s *stubAdapter) Get(context.Context, paddock.Handle) (paddock.Info, error) {
	return paddock.Info{}, paddock.ErrNotSupported
}
func (s *stubAdapter) Destroy(context.Context, paddock.Handle) error { return paddock.ErrNotSupported }
func (s *stubAdapter) ListAllNames(context.Context) ([]string, error) {
	return nil, paddock.ErrNotSupported
}
func (s *stubAdapter) Suspend(context.Context, paddock.Handle) error { return paddock.ErrNotSupported }
func (s *stubAdapter) Resume(context.Context, paddock.Handle) (paddock.Handle, error) {
	return paddock.Handle{}, paddock.ErrNotSupported
}
func (s *stubAdapter) WriteFile(context.Context, paddock.Handle, string, fs.FileMode, io.Reader) error {
	return paddock.ErrNotSupported
}
func (s *stubAdapter) ReadFile(context.Context, paddock.Handle, string) (io.ReadCloser, error) {
	return nil, paddock.ErrNotSupported
}
func (s *stubAdapter) Exec(context.Context, paddock.Handle, paddock.Cmd, paddock.ExecOpts) (paddock.ExecResult, error) {
	return paddock.ExecResult{}, paddock.ErrNotSupported
}
func (s *stubAdapter) Spawn(context.Context, paddock.Handle, paddock.Cmd, paddock.SpawnOpts) (paddock.Stream, error) {
	return nil, paddock.ErrNotSupported
}
func (s *stubAdapter) ListSessions(context.Context, paddock.Handle) ([]paddock.Session, error) {
	return nil, paddock.ErrNotSupported
}
func (s *stubAdapter) Attach(context.Context, paddock.Handle, string, paddock.AttachOpts) (paddock.Stream, error) {
	return nil, paddock.ErrNotSupported
}

// fullAdapter adds every optional operation to stubAdapter; each records its
// call and succeeds.
type fullAdapter struct{ stubAdapter }

func (f *fullAdapter) CreateNew(_ context.Context, name string, _ paddock.CreateNewOpts) (paddock.Handle, error) {
	return paddock.Handle{Provider: "stub", Name: name, InstanceID: "i-1"}, f.called("create_new")
}
func (f *fullAdapter) DestroyOnce(context.Context, paddock.Handle, paddock.DestroyOnceOpts) error {
	return f.called("destroy_once")
}
func (f *fullAdapter) CreateCheckpointOnce(context.Context, paddock.Handle, paddock.CheckpointOnceOpts) (string, error) {
	return "cp-1", f.called("checkpoint_once")
}
func (f *fullAdapter) ApplyNetworkPolicy(context.Context, paddock.Handle, paddock.NetworkPolicy) error {
	return f.called("apply_network_policy")
}
func (f *fullAdapter) PublicURL(context.Context, paddock.Handle) (string, error) {
	return "https://stub.test", f.called("public_url")
}
func (f *fullAdapter) CreateCheckpoint(context.Context, paddock.Handle, paddock.CheckpointOpts) (string, error) {
	return "cp-1", f.called("create_checkpoint")
}
func (f *fullAdapter) RestoreCheckpoint(context.Context, paddock.Handle, string) error {
	return f.called("restore_checkpoint")
}
func (f *fullAdapter) ListCheckpoints(context.Context, paddock.Handle) ([]paddock.Checkpoint, error) {
	return []paddock.Checkpoint{{ID: "cp-1"}}, f.called("list_checkpoints")
}
func (f *fullAdapter) TerminateSession(_ context.Context, _ paddock.Handle, _ string, o paddock.TerminateOpts) error {
	return f.called("terminate:" + string(o.Mode))
}
func (f *fullAdapter) Expose(_ context.Context, _ paddock.Handle, port int, _ paddock.ExposeOpts) (paddock.Preview, error) {
	return paddock.Preview{URL: "http://p.test/", Port: port}, f.called("expose")
}
func (f *fullAdapter) Revoke(context.Context, paddock.Handle, paddock.Preview) error {
	return f.called("revoke")
}
func (f *fullAdapter) HostPath(_ paddock.Handle, path string) string { return "/host" + path }
