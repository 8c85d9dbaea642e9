package actors_test

import (
	"context"
	"io"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/durationpb"
)

// recorder is the fake with every optional operation, counting the adapter
// (and stream) methods each call reaches.
type recorder struct {
	*fake.Adapter
	mu    sync.Mutex
	calls map[string]int
}

func newRecorder() *recorder { return &recorder{Adapter: fake.New(), calls: map[string]int{}} }

func (r *recorder) saw(method string) {
	r.mu.Lock()
	r.calls[method]++
	r.mu.Unlock()
}

func (r *recorder) count(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[method]
}

func (r *recorder) Capabilities() paddock.CapabilitySet {
	r.saw("Capabilities")
	return paddock.NewCapabilitySet(append(fake.Capabilities().List(),
		paddock.CapCheckpoint, paddock.CapCreateCheckpointOnce, paddock.CapDestroyOnce, paddock.CapSignal, paddock.CapResize, paddock.CapFork)...)
}

func (r *recorder) Create(ctx context.Context, name string, o paddock.CreateOpts) (paddock.Handle, error) {
	r.saw("Create")
	return r.Adapter.Create(ctx, name, o)
}
func (r *recorder) CreateNew(ctx context.Context, name string, o paddock.CreateNewOpts) (paddock.Handle, error) {
	r.saw("CreateNew")
	return r.Adapter.CreateNew(ctx, name, o)
}
func (r *recorder) Get(ctx context.Context, h paddock.Handle) (paddock.Info, error) {
	r.saw("Get")
	return r.Adapter.Get(ctx, h)
}
func (r *recorder) Destroy(ctx context.Context, h paddock.Handle) error {
	r.saw("Destroy")
	return nil // the sandbox stays, for the next calls
}
func (r *recorder) DestroyOnce(context.Context, paddock.Handle, paddock.DestroyOnceOpts) error {
	r.saw("DestroyOnce")
	return nil
}
func (r *recorder) ListAllNames(ctx context.Context) ([]string, error) {
	r.saw("ListAllNames")
	return r.Adapter.ListAllNames(ctx)
}
func (r *recorder) Suspend(ctx context.Context, h paddock.Handle) error {
	r.saw("Suspend")
	return nil
}
func (r *recorder) Resume(ctx context.Context, h paddock.Handle) (paddock.Handle, error) {
	r.saw("Resume")
	return h, nil
}
func (r *recorder) Exec(ctx context.Context, h paddock.Handle, c paddock.Cmd, o paddock.ExecOpts) (paddock.ExecResult, error) {
	r.saw("Exec")
	return r.Adapter.Exec(ctx, h, c, o)
}
func (r *recorder) Spawn(ctx context.Context, h paddock.Handle, c paddock.Cmd, o paddock.SpawnOpts) (paddock.Stream, error) {
	r.saw("Spawn")
	st, err := r.Adapter.Spawn(ctx, h, c, o)
	if err != nil {
		return nil, err
	}
	return &recordedStream{Stream: st, r: r}, nil
}
func (r *recorder) Attach(ctx context.Context, h paddock.Handle, id string, o paddock.AttachOpts) (paddock.Stream, error) {
	r.saw("Attach")
	return r.Adapter.Attach(ctx, h, id, o)
}
func (r *recorder) ListSessions(ctx context.Context, h paddock.Handle) ([]paddock.Session, error) {
	r.saw("ListSessions")
	return r.Adapter.ListSessions(ctx, h)
}
func (r *recorder) TerminateSession(ctx context.Context, h paddock.Handle, id string, o paddock.TerminateOpts) error {
	r.saw("TerminateSession")
	return r.Adapter.TerminateSession(ctx, h, id, o)
}
func (r *recorder) ApplyNetworkPolicy(ctx context.Context, h paddock.Handle, p paddock.NetworkPolicy) error {
	r.saw("ApplyNetworkPolicy")
	return r.Adapter.ApplyNetworkPolicy(ctx, h, p)
}
func (r *recorder) PublicURL(ctx context.Context, h paddock.Handle) (string, error) {
	r.saw("PublicURL")
	return r.Adapter.PublicURL(ctx, h)
}
func (r *recorder) CreateCheckpoint(context.Context, paddock.Handle, paddock.CheckpointOpts) (string, error) {
	r.saw("CreateCheckpoint")
	return "cp-1", nil
}
func (r *recorder) CreateCheckpointOnce(context.Context, paddock.Handle, paddock.CheckpointOnceOpts) (string, error) {
	r.saw("CreateCheckpointOnce")
	return "cp-2", nil
}
func (r *recorder) RestoreCheckpoint(context.Context, paddock.Handle, string) error {
	r.saw("RestoreCheckpoint")
	return nil
}
func (r *recorder) ListCheckpoints(context.Context, paddock.Handle) ([]paddock.Checkpoint, error) {
	r.saw("ListCheckpoints")
	return nil, nil
}
func (r *recorder) DeleteCheckpoint(context.Context, paddock.Handle, string) error {
	r.saw("DeleteCheckpoint")
	return nil
}
func (r *recorder) Fork(ctx context.Context, _ paddock.Handle, _, name string, _ paddock.ForkOpts) (paddock.Handle, error) {
	r.saw("Fork")
	return r.Adapter.Create(ctx, name, paddock.CreateOpts{})
}
func (r *recorder) WriteFile(ctx context.Context, h paddock.Handle, path string, mode fs.FileMode, data io.Reader) error {
	r.saw("WriteFile")
	return r.Adapter.WriteFile(ctx, h, path, mode, data)
}
func (r *recorder) ReadFile(ctx context.Context, h paddock.Handle, path string) (io.ReadCloser, error) {
	r.saw("ReadFile")
	return r.Adapter.ReadFile(ctx, h, path)
}
func (r *recorder) Expose(ctx context.Context, h paddock.Handle, port int, o paddock.ExposeOpts) (paddock.Preview, error) {
	r.saw("Expose")
	return r.Adapter.Expose(ctx, h, port, o)
}
func (r *recorder) Revoke(ctx context.Context, h paddock.Handle, p paddock.Preview) error {
	r.saw("Revoke")
	return nil
}
func (r *recorder) Watch(ctx context.Context, h paddock.Handle, path string) (paddock.FileWatch, error) {
	r.saw("Watch")
	return r.Adapter.Watch(ctx, h, path)
}
func (r *recorder) ListDir(ctx context.Context, h paddock.Handle, path string) ([]paddock.FileInfo, error) {
	r.saw("ListDir")
	return r.Adapter.ListDir(ctx, h, path)
}
func (r *recorder) Stat(ctx context.Context, h paddock.Handle, path string) (paddock.FileInfo, error) {
	r.saw("Stat")
	return r.Adapter.Stat(ctx, h, path)
}
func (r *recorder) Remove(context.Context, paddock.Handle, string, paddock.RemoveOpts) error {
	r.saw("Remove")
	return nil
}
func (r *recorder) Rename(context.Context, paddock.Handle, string, string) error {
	r.saw("Rename")
	return nil
}
func (r *recorder) MakeDir(context.Context, paddock.Handle, string, paddock.MakeDirOpts) error {
	r.saw("MakeDir")
	return nil
}

// recordedStream counts the stdin calls and the local detach.
type recordedStream struct {
	paddock.Stream
	r *recorder
}

func (s *recordedStream) WriteStdin(ctx context.Context, p []byte) error {
	s.r.saw("WriteStdin")
	return s.Stream.WriteStdin(ctx, p)
}
func (s *recordedStream) CloseStdin(ctx context.Context) error {
	s.r.saw("CloseStdin")
	return s.Stream.CloseStdin(ctx)
}
func (s *recordedStream) Close() error {
	s.r.saw("Close")
	return s.Stream.Close()
}
func (s *recordedStream) Signal(context.Context, paddock.Signal) error {
	s.r.saw("Signal")
	return nil
}
func (s *recordedStream) Resize(context.Context, paddock.TermSize) error {
	s.r.saw("Resize")
	return nil
}

// path is one way of reaching an operation.
type path func(t *testing.T, f *opFixture) error

// opFixture is what the paths of one operation share.
type opFixture struct {
	rt *actors.Runtime
	v  *client.Client
	h  paddock.Handle
}

// live spawns a fresh command with stdin, as a plain-Go stream.
func (f *opFixture) live(t *testing.T) *actors.FrameStream {
	s, err := spawn(f.rt, ctx, f.h, paddock.NewCmd("emit", "stay"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// raw sends the request to the runtime's root as any actor would, and
// answers the failure of its reply, checking the reply type.
func (f *opFixture) raw(t *testing.T, req proto.Message) error {
	resp := f.rt.Engine().Request(f.rt.PID(), req, 5*time.Second)
	got, err := resp.Result()
	require.NoError(t, err, "a reply arrives")
	reply, ok := got.(interface {
		proto.Message
		GetFailure() *messages.Failure
	})
	require.True(t, ok, "%T is a reply", got)
	want := strings.TrimSuffix(string(req.ProtoReflect().Descriptor().Name()), "Request") + "Reply"
	require.Equal(t, want, string(reply.ProtoReflect().Descriptor().Name()))
	return wire.ErrorOf(reply.GetFailure())
}

func (f *opFixture) hm() *messages.Handle { return wire.HandleMessage(f.h) }

// owner spawns an owner actor for a raw spawn or attach (a request's reply
// address cannot own frames) and names it.
func (f *opFixture) owner(t *testing.T) *messages.Pid {
	credits := actors.NewCredits(0)
	pid := f.rt.Engine().SpawnFunc(func(c *actor.Context) {
		if fr, ok := c.Message().(messages.Frame); ok {
			credits.Consumed(c, fr)
		}
	}, "owner")
	t.Cleanup(func() { <-f.rt.Engine().Poison(pid).Done() })
	return messages.PidOf(pid)
}

func (f *opFixture) cmdOf(s *actors.FrameStream) *messages.CommandRef {
	return wire.CommandMessage(s.Subscription())
}

// reach is, per operation, the adapter method it must reach and the two
// ways to call it: a raw request, and the runtime's Adapter (the client).
var reach = map[string]struct {
	method      string
	raw, client path
}{
	"create": {"Create",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.CreateRequest{Id: "r", Provider: "fake", Name: "box"})
		},
		func(t *testing.T, f *opFixture) error {
			_, err := f.v.Create(ctx, "box", paddock.CreateOpts{})
			return err
		}},
	"create_new": {"CreateNew",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.CreateNewRequest{Id: "r", Provider: "fake", Name: "new-2"})
		},
		func(t *testing.T, f *opFixture) error {
			_, err := f.v.CreateNew(ctx, "new-3", paddock.CreateNewOpts{})
			return err
		}},
	"get": {"Get",
		func(t *testing.T, f *opFixture) error { return f.raw(t, &messages.GetRequest{Id: "r", Handle: f.hm()}) },
		func(t *testing.T, f *opFixture) error { _, err := f.v.Get(ctx, f.h); return err }},
	"destroy": {"Destroy",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.DestroyRequest{Id: "r", Handle: f.hm()})
		},
		func(t *testing.T, f *opFixture) error { return f.v.Destroy(ctx, f.h) }},
	"destroy_once": {"DestroyOnce",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.DestroyOnceRequest{Id: "r", Handle: f.hm()})
		},
		func(t *testing.T, f *opFixture) error { return f.v.DestroyOnce(ctx, f.h, paddock.DestroyOnceOpts{}) }},
	"list": {"ListAllNames",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.ListRequest{Id: "r", Provider: "fake"})
		},
		func(t *testing.T, f *opFixture) error { _, err := f.v.ListAllNames(ctx); return err }},
	"capabilities": {"Capabilities",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.CapabilitiesRequest{Id: "r", Provider: "fake"})
		},
		func(t *testing.T, f *opFixture) error { f.v.Capabilities(); return nil }},
	"suspend": {"Suspend",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.SuspendRequest{Id: "r", Handle: f.hm()})
		},
		func(t *testing.T, f *opFixture) error { return f.v.Suspend(ctx, f.h) }},
	"resume": {"Resume",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.ResumeRequest{Id: "r", Handle: f.hm()})
		},
		func(t *testing.T, f *opFixture) error { _, err := f.v.Resume(ctx, f.h); return err }},
	"exec": {"Exec",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.ExecRequest{Id: "r", Handle: f.hm(), Cmd: wire.CmdMessage(paddock.NewCmd("emit", "out:x"))})
		},
		func(t *testing.T, f *opFixture) error {
			_, err := f.v.Exec(ctx, f.h, paddock.NewCmd("emit", "out:x"), paddock.ExecOpts{})
			return err
		}},
	"spawn": {"Spawn",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.SpawnRequest{Id: "r", Handle: f.hm(), Cmd: wire.CmdMessage(paddock.NewCmd("emit", "out:x")), Owner: f.owner(t)})
		},
		func(t *testing.T, f *opFixture) error {
			st, err := f.v.Spawn(ctx, f.h, paddock.NewCmd("emit", "out:x"), paddock.SpawnOpts{})
			if err == nil {
				_ = st.Close()
			}
			return err
		}},
	"write_stdin": {"WriteStdin",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.WriteStdinRequest{Id: "r", Command: f.cmdOf(f.live(t)), Data: []byte("x")})
		},
		func(t *testing.T, f *opFixture) error {
			st, err := f.v.Spawn(ctx, f.h, paddock.NewCmd("emit", "stay"), paddock.SpawnOpts{Stdin: true})
			require.NoError(t, err)
			defer st.Close()
			return st.WriteStdin(ctx, []byte("x"))
		}},
	"signal": {"Signal",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.SignalRequest{Id: "r", Command: f.cmdOf(f.live(t)), Signal: "USR1"})
		},
		func(t *testing.T, f *opFixture) error {
			st, err := f.v.Spawn(ctx, f.h, paddock.NewCmd("emit", "stay"), paddock.SpawnOpts{})
			require.NoError(t, err)
			defer st.Close()
			return paddock.SignalCommand(ctx, f.v, st, paddock.SignalUsr1)
		}},
	"resize": {"Resize",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.ResizeRequest{Id: "r", Command: f.cmdOf(f.live(t)), Size: &messages.TermSize{Cols: 90, Rows: 30}})
		},
		func(t *testing.T, f *opFixture) error {
			st, err := f.v.Spawn(ctx, f.h, paddock.NewCmd("emit", "stay"), paddock.SpawnOpts{})
			require.NoError(t, err)
			defer st.Close()
			return paddock.ResizeTerminal(ctx, f.v, st, paddock.TermSize{Cols: 90, Rows: 30})
		}},
	"close_stdin": {"CloseStdin",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.CloseStdinRequest{Id: "r", Command: f.cmdOf(f.live(t))})
		},
		func(t *testing.T, f *opFixture) error {
			st, err := f.v.Spawn(ctx, f.h, paddock.NewCmd("emit", "stay"), paddock.SpawnOpts{Stdin: true})
			require.NoError(t, err)
			defer st.Close()
			return st.CloseStdin(ctx)
		}},
	"stop_command": {"Close",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.StopCommandRequest{Id: "r", Command: f.cmdOf(f.live(t))})
		},
		func(t *testing.T, f *opFixture) error {
			st, err := f.v.Spawn(ctx, f.h, paddock.NewCmd("emit", "stay"), paddock.SpawnOpts{Stdin: true})
			require.NoError(t, err)
			return st.Close()
		}},
	"list_sessions": {"ListSessions",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.ListSessionsRequest{Id: "r", Handle: f.hm()})
		},
		func(t *testing.T, f *opFixture) error { _, err := f.v.ListSessions(ctx, f.h); return err }},
	"attach": {"Attach",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.AttachRequest{Id: "r", Handle: f.hm(), SessionId: f.live(t).SessionID(), Owner: f.owner(t)})
		},
		func(t *testing.T, f *opFixture) error {
			st, err := f.v.Attach(ctx, f.h, f.live(t).SessionID(), paddock.AttachOpts{})
			if err == nil {
				_ = st.Close()
			}
			return err
		}},
	"terminate_session": {"TerminateSession",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.TerminateSessionRequest{Id: "r", Handle: f.hm(), SessionId: f.live(t).SessionID(), Timeout: durationpb.New(time.Second)})
		},
		func(t *testing.T, f *opFixture) error {
			return f.v.TerminateSession(ctx, f.h, f.live(t).SessionID(), paddock.TerminateOpts{})
		}},
	"apply_network_policy": {"ApplyNetworkPolicy",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.ApplyNetworkPolicyRequest{Id: "r", Handle: f.hm()})
		},
		func(t *testing.T, f *opFixture) error {
			return f.v.ApplyNetworkPolicy(ctx, f.h, paddock.NetworkPolicy{Allow: []string{}})
		}},
	"public_url": {"PublicURL",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.PublicURLRequest{Id: "r", Handle: f.hm()})
		},
		func(t *testing.T, f *opFixture) error { _, err := f.v.PublicURL(ctx, f.h); return err }},
	"create_checkpoint": {"CreateCheckpoint",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.CreateCheckpointRequest{Id: "r", Handle: f.hm()})
		},
		func(t *testing.T, f *opFixture) error {
			_, err := f.v.CreateCheckpoint(ctx, f.h, paddock.CheckpointOpts{})
			return err
		}},
	"create_checkpoint_once": {"CreateCheckpointOnce",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.CreateCheckpointOnceRequest{Id: "r", Handle: f.hm(), OperationId: "op-2"})
		},
		func(t *testing.T, f *opFixture) error {
			_, err := f.v.CreateCheckpointOnce(ctx, f.h, paddock.CheckpointOnceOpts{OperationID: "op-3"})
			return err
		}},
	"restore_checkpoint": {"RestoreCheckpoint",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.RestoreCheckpointRequest{Id: "r", Handle: f.hm(), CheckpointId: "cp-1"})
		},
		func(t *testing.T, f *opFixture) error { return f.v.RestoreCheckpoint(ctx, f.h, "cp-1") }},
	"list_checkpoints": {"ListCheckpoints",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.ListCheckpointsRequest{Id: "r", Handle: f.hm()})
		},
		func(t *testing.T, f *opFixture) error { _, err := f.v.ListCheckpoints(ctx, f.h); return err }},
	"delete_checkpoint": {"DeleteCheckpoint",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.DeleteCheckpointRequest{Id: "r", Handle: f.hm(), CheckpointId: "cp-1"})
		},
		func(t *testing.T, f *opFixture) error { return f.v.DeleteCheckpoint(ctx, f.h, "cp-1") }},
	"fork": {"Fork",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.ForkRequest{Id: "r", Provider: "fake", Name: "fork-2", Source: f.hm(), CheckpointId: "cp-1"})
		},
		func(t *testing.T, f *opFixture) error {
			_, err := f.v.Fork(ctx, f.h, "cp-1", "fork-3", paddock.ForkOpts{})
			return err
		}},
	"write_file": {"WriteFile",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.WriteFileRequest{Id: "r", Handle: f.hm(), Path: "/f", Mode: 0o644, Data: []byte("x")})
		},
		func(t *testing.T, f *opFixture) error {
			return f.v.WriteFile(ctx, f.h, "/f", 0o644, strings.NewReader("x"))
		}},
	"read_file": {"ReadFile",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.ReadFileRequest{Id: "r", Handle: f.hm(), Path: "/f"})
		},
		func(t *testing.T, f *opFixture) error {
			rc, err := f.v.ReadFile(ctx, f.h, "/f")
			if err == nil {
				_ = rc.Close()
			}
			return err
		}},
	"watch": {"Watch",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.WatchRequest{Id: "r", Handle: f.hm(), Path: "/", Owner: f.owner(t)})
		},
		func(t *testing.T, f *opFixture) error {
			w, err := f.v.Watch(ctx, f.h, "/")
			if err == nil {
				_ = w.Close()
			}
			return err
		}},
	"list_dir": {"ListDir",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.ListDirRequest{Id: "r", Handle: f.hm(), Path: "/"})
		},
		func(t *testing.T, f *opFixture) error { _, err := f.v.ListDir(ctx, f.h, "/"); return err }},
	"stat": {"Stat",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.StatRequest{Id: "r", Handle: f.hm(), Path: "/f"})
		},
		func(t *testing.T, f *opFixture) error { _, err := f.v.Stat(ctx, f.h, "/f"); return err }},
	"remove": {"Remove",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.RemoveRequest{Id: "r", Handle: f.hm(), Path: "/g"})
		},
		func(t *testing.T, f *opFixture) error { return f.v.Remove(ctx, f.h, "/g", paddock.RemoveOpts{}) }},
	"rename": {"Rename",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.RenameRequest{Id: "r", Handle: f.hm(), From: "/g", To: "/h"})
		},
		func(t *testing.T, f *opFixture) error { return f.v.Rename(ctx, f.h, "/g", "/h") }},
	"make_dir": {"MakeDir",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.MakeDirRequest{Id: "r", Handle: f.hm(), Path: "/d"})
		},
		func(t *testing.T, f *opFixture) error { return f.v.MakeDir(ctx, f.h, "/d", paddock.MakeDirOpts{}) }},
	"expose": {"Expose",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.ExposeRequest{Id: "r", Handle: f.hm(), Port: 8080})
		},
		func(t *testing.T, f *opFixture) error {
			_, err := f.v.Expose(ctx, f.h, 8080, paddock.ExposeOpts{})
			return err
		}},
	"revoke": {"Revoke",
		func(t *testing.T, f *opFixture) error {
			return f.raw(t, &messages.RevokeRequest{Id: "r", Handle: f.hm(), Preview: &messages.Preview{Url: "u"}})
		},
		func(t *testing.T, f *opFixture) error { return f.v.Revoke(ctx, f.h, paddock.Preview{URL: "u"}) }},
}

// Every request of the messages protocol has exactly one declaration, and
// every declared operation reaches its adapter method from a raw request
// sent to the runtime's PID and through the runtime's Adapter.
func TestEveryOperationIsDeclaredOnceAndReachable(t *testing.T) {
	t.Parallel()
	declared := actors.Operations()
	var requests []string
	msgs := messages.File_messages_proto.Messages()
	for i := range msgs.Len() {
		if name := msgs.Get(i).FullName(); strings.HasSuffix(string(name), "Request") {
			requests = append(requests, string(name))
			_, ok := declared[string(name)]
			assert.True(t, ok, "%s has a declaration", name)
			reply := strings.TrimSuffix(string(name), "Request") + "Reply"
			assert.NotNil(t, msgs.ByName(protoreflect.FullName(reply).Name()), "%s has a reply", name)
		}
	}
	assert.Len(t, declared, len(requests), "one declaration per request, none more")
	names := map[string]bool{}
	for _, op := range declared {
		assert.False(t, names[op], "%s is declared once", op)
		names[op] = true
		assert.Contains(t, reach, op, "the test reaches %s", op)
	}
	assert.Len(t, reach, len(declared))

	rec := newRecorder()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": rec}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)); rec.Reset() })
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	require.NoError(t, rec.Adapter.WriteFile(ctx, h, "/f", 0o644, strings.NewReader("x")), "read_file may come first")
	f := &opFixture{rt: rt, v: rt.Adapter("fake"), h: h}
	for op, r := range reach {
		for way, call := range map[string]path{"raw request": r.raw, "client": r.client} {
			t.Run(op+" via "+way, func(t *testing.T) {
				before := rec.count(r.method)
				require.NoError(t, call(t, f))
				require.Eventually(t, func() bool { return rec.count(r.method) > before }, time.Minute, time.Millisecond,
					"%s reached %s", op, r.method)
			})
		}
	}
}

// Every operation addressed by a handle refuses a malformed sandbox name
// before anything reaches the adapter, whatever else the request holds.
func TestEveryHandleOperationValidatesTheNameFirst(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": rec}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)); rec.Reset() })
	f := &opFixture{rt: rt}
	total := func() int {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		n := 0
		for _, c := range rec.calls {
			n += c
		}
		return n
	}
	checked := 0
	for name := range actors.Operations() {
		mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name))
		require.NoError(t, err)
		fields := mt.Descriptor().Fields()
		handle := fields.ByName("handle")
		if handle == nil {
			continue
		}
		checked++
		t.Run(name, func(t *testing.T) {
			m := mt.New()
			m.Set(fields.ByName("id"), protoreflect.ValueOfString("r"))
			m.Set(handle, protoreflect.ValueOfMessage(wire.HandleMessage(paddock.Handle{Provider: "fake", Name: "a/b"}).ProtoReflect()))
			err := f.raw(t, m.Interface())
			require.ErrorIs(t, err, paddock.ErrInvalid)
			assert.Contains(t, err.Error(), paddock.DetailSandboxName)
		})
	}
	assert.Equal(t, 27, checked, "the operations addressed by a handle")
	assert.Zero(t, total(), "nothing reached the adapter")
}

// A request's reply address (hollywood's Engine.Request) takes one message,
// so it cannot own a command's frames: a raw spawn or attach sent that way
// without an Owner is refused before the adapter is called.
func TestARequestReplyAddressCannotOwnFrames(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": rec}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)); rec.Reset() })
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	f := &opFixture{rt: rt, h: h}
	for name, req := range map[string]proto.Message{
		"spawn":  &messages.SpawnRequest{Id: "r", Handle: f.hm(), Cmd: wire.CmdMessage(paddock.NewCmd("emit", "out:x"))},
		"attach": &messages.AttachRequest{Id: "r", Handle: f.hm(), SessionId: "s-1"},
		"watch":  &messages.WatchRequest{Id: "r", Handle: f.hm(), Path: "/"},
	} {
		err := f.raw(t, req)
		require.ErrorIs(t, err, paddock.ErrInvalid, name)
		assert.Contains(t, err.Error(), "set Owner", name)
	}
	assert.Zero(t, rec.count("Spawn")+rec.count("Attach")+rec.count("Watch"), "nothing reached the adapter")
}
