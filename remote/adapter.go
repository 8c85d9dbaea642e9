package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Defaults of AdapterConfig.
const (
	DefaultTimeout = 30 * time.Second
	DefaultLease   = 30 * time.Second
	DefaultWindow  = 16
)

// AdapterConfig configures an Adapter.
type AdapterConfig struct {
	// Peer is the serving node's address (its Config.Addr).
	Peer string
	// Runtime is the serving runtime's name (actors.Config.Name); "" =
	// "default".
	Runtime string
	// Provider is the serving runtime's provider this adapter drives; the
	// adapter's handles carry the same tag.
	Provider paddock.Provider
	// Timeout bounds a request whose context has no deadline; 0 =
	// DefaultTimeout. A request whose reply the link lost fails with
	// unavailable when it elapses. An exec with a timeout of its own waits
	// that much longer; one without is bounded by Timeout alone.
	Timeout time.Duration
	// Lease is the serving runtime's RemoteLease: a subscription credits
	// its command at least every fifth of it, and reports
	// Error{node_lost} once the serving node was silent for three
	// quarters of it. 0 = DefaultLease.
	Lease time.Duration
	// Window is how many frames a subscription lets its command send
	// ahead of what was read (each at most actors.RemoteFrameMax bytes);
	// 0 = DefaultWindow.
	Window int
}

// Adapter drives the sandboxes of one provider of a runtime on another
// node: every operation is a request of package messages to that runtime,
// and every stream an owner proxy on this node that receives its frames,
// re-attaches when the link lost some, and reports node_lost when the
// serving node goes silent (docs/contract.md#remote). Register it in the
// runtime of this node like any adapter.
type Adapter struct {
	n      *Node
	cfg    AdapterConfig
	root   *actor.PID
	client *actor.PID
	caps   paddock.CapabilitySet

	nextID  atomic.Uint64
	prefix  string
	waiting sync.Map // request id -> chan proto.Message
}

var (
	_ paddock.Adapter           = (*Adapter)(nil)
	_ paddock.CreateNewer       = (*Adapter)(nil)
	_ paddock.DestroyOncer      = (*Adapter)(nil)
	_ paddock.SessionTerminator = (*Adapter)(nil)
	_ paddock.PolicyApplier     = (*Adapter)(nil)
	_ paddock.PublicURLer       = (*Adapter)(nil)
	_ paddock.Checkpointer      = (*Adapter)(nil)
	_ paddock.FileManager       = (*Adapter)(nil)
)

// supported are the capabilities an Adapter can carry across; the rest of
// the serving adapter's are left out.
var supported = paddock.NewCapabilitySet(paddock.CapTTY, paddock.CapAttach, paddock.CapSuspend, paddock.CapCreateNew, paddock.CapDestroyOnce, paddock.CapTerminateSession,
	paddock.CapNetworkPolicy, paddock.CapPublicURL, paddock.CapCheckpoint, paddock.CapFiles, paddock.CapSignal,
	paddock.CapResize, paddock.CapNamedSpawn)

var adapters atomic.Uint64

// NewAdapter connects to the runtime at cfg.Peer through n and reads what
// its provider advertises; the adapter advertises the part of it it can
// carry.
func NewAdapter(ctx context.Context, n *Node, cfg AdapterConfig) (*Adapter, error) {
	if cfg.Peer == "" || cfg.Provider == "" || cfg.Timeout < 0 || cfg.Lease < 0 || cfg.Window < 0 {
		return nil, &paddock.InvalidError{Detail: "remote adapter config: a peer and a provider are required, and no negative timeout, lease or window"}
	}
	if cfg.Runtime == "" {
		cfg.Runtime = "default"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Lease == 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Window == 0 {
		cfg.Window = DefaultWindow
	}
	a := &Adapter{n: n, cfg: cfg, root: actor.NewPID(cfg.Peer, "paddock/"+cfg.Runtime),
		prefix: "r" + strconv.FormatUint(adapters.Add(1), 10) + "-"}
	a.client = n.Engine.SpawnFunc(a.receive, "paddock-remote", actor.WithID(a.prefix+"client"))
	r, err := call[*messages.CapabilitiesReply](ctx, a, &messages.CapabilitiesRequest{Provider: string(cfg.Provider)})
	if err != nil {
		a.Close()
		return nil, err
	}
	var caps []paddock.Capability
	for _, c := range r.GetCapabilities() {
		if cp := paddock.Capability(c); supported.Has(cp) {
			caps = append(caps, cp)
		}
	}
	a.caps = paddock.NewCapabilitySet(caps...)
	return a, nil
}

// Close stops the adapter's actor; streams it opened end on their own.
func (a *Adapter) Close() {
	<-a.n.Engine.Poison(a.client).Done()
}

// receive hands each reply to the call waiting for it.
func (a *Adapter) receive(c *actor.Context) {
	m, ok := c.Message().(interface {
		proto.Message
		GetId() string
	})
	if !ok {
		return
	}
	if ch, ok := a.waiting.LoadAndDelete(m.GetId()); ok {
		ch.(chan proto.Message) <- m
	}
}

// newID is a request id unique to this adapter.
func (a *Adapter) newID() string {
	return a.prefix + strconv.FormatUint(a.nextID.Add(1), 10)
}

// failing is what every reply has.
type failing interface {
	proto.Message
	GetFailure() *messages.Failure
}

// call sends q to the serving root with a fresh id and waits for its reply,
// until ctx ends or, without a deadline, the adapter's timeout.
func call[R failing](ctx context.Context, a *Adapter, q proto.Message) (R, error) {
	var zero R
	id := a.newID()
	setID(q, id)
	if size := proto.Size(q); size > a.n.cfg.MaxMessage {
		return zero, &paddock.InvalidError{Detail: fmt.Sprintf("remote: the request is %d bytes, over the %d-byte message limit", size, a.n.cfg.MaxMessage)}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.cfg.Timeout)
		defer cancel()
	}
	ch := make(chan proto.Message, 1)
	a.waiting.Store(id, ch)
	defer a.waiting.Delete(id)
	a.n.Engine.SendWithSender(a.root, q, a.client)
	select {
	case m := <-ch:
		r, ok := m.(R)
		if !ok {
			return zero, &paddock.UnavailableError{Detail: fmt.Sprintf("remote: a %T answered a %T", m, q)}
		}
		return r, errorOf(r.GetFailure())
	case <-ctx.Done():
		// unavailable, and the context's end too: a caller that ended it
		// itself can tell
		return zero, fmt.Errorf("%w: %w", &paddock.UnavailableError{Detail: "remote: no reply from " + a.cfg.Peer}, ctx.Err())
	}
}

// setID sets a request's id field.
func setID(q proto.Message, id string) {
	m := q.ProtoReflect()
	m.Set(m.Descriptor().Fields().ByName("id"), protoreflect.ValueOfString(id))
}

// errorOf is a reply's failure as the serving adapter's error, without the
// serving runtime's wrapping (this node's runtime wraps it again).
func errorOf(f *messages.Failure) error {
	err := wire.ErrorOf(f)
	var op *paddock.OpError
	if errors.As(err, &op) {
		return op.Err
	}
	return err
}

func (a *Adapter) handle(h paddock.Handle) *messages.Handle {
	return &messages.Handle{Provider: string(a.cfg.Provider), Name: h.Name, InstanceId: h.InstanceID}
}

// ours tags a handle the serving runtime returned with this adapter's
// provider.
func (a *Adapter) ours(m *messages.Handle) paddock.Handle {
	h := wire.HandleFromMessage(m)
	h.Provider = a.cfg.Provider
	return h
}

// Provider is the serving provider's tag.
func (a *Adapter) Provider() paddock.Provider { return a.cfg.Provider }

// Capabilities is what the serving adapter advertised when the adapter
// connected, less what cannot cross.
func (a *Adapter) Capabilities() paddock.CapabilitySet { return a.caps }

// BuildHandle returns {Provider(), name}.
func (a *Adapter) BuildHandle(name string) paddock.Handle {
	return paddock.Handle{Provider: a.cfg.Provider, Name: name}
}

func (a *Adapter) Create(ctx context.Context, name string, opts paddock.CreateOpts) (paddock.Handle, error) {
	r, err := call[*messages.CreateReply](ctx, a, &messages.CreateRequest{Provider: string(a.cfg.Provider), Name: name, Params: opts.Params})
	if err != nil {
		return paddock.Handle{}, err
	}
	return a.ours(r.GetHandle()), nil
}

func (a *Adapter) CreateNew(ctx context.Context, name string, opts paddock.CreateNewOpts) (paddock.Handle, error) {
	r, err := call[*messages.CreateNewReply](ctx, a, &messages.CreateNewRequest{Provider: string(a.cfg.Provider), Name: name,
		Timeout: wire.DurationMessage(opts.Timeout), WaitForCapacity: opts.WaitForCapacity})
	if err != nil {
		return paddock.Handle{}, err
	}
	return a.ours(r.GetHandle()), nil
}

func (a *Adapter) Get(ctx context.Context, h paddock.Handle) (paddock.Info, error) {
	r, err := call[*messages.GetReply](ctx, a, &messages.GetRequest{Handle: a.handle(h)})
	if err != nil {
		return paddock.Info{}, err
	}
	return wire.InfoFromMessage(r.GetInfo()), nil
}

func (a *Adapter) Destroy(ctx context.Context, h paddock.Handle) error {
	_, err := call[*messages.DestroyReply](ctx, a, &messages.DestroyRequest{Handle: a.handle(h)})
	return err
}

func (a *Adapter) DestroyOnce(ctx context.Context, h paddock.Handle, opts paddock.DestroyOnceOpts) error {
	_, err := call[*messages.DestroyOnceReply](ctx, a, &messages.DestroyOnceRequest{Handle: a.handle(h), Timeout: wire.DurationMessage(opts.Timeout)})
	return err
}

func (a *Adapter) ListAllNames(ctx context.Context) ([]string, error) {
	r, err := call[*messages.ListReply](ctx, a, &messages.ListRequest{Provider: string(a.cfg.Provider)})
	if err != nil {
		return nil, err
	}
	return r.GetNames(), nil
}

func (a *Adapter) Suspend(ctx context.Context, h paddock.Handle) error {
	_, err := call[*messages.SuspendReply](ctx, a, &messages.SuspendRequest{Handle: a.handle(h)})
	return err
}

func (a *Adapter) Resume(ctx context.Context, h paddock.Handle) (paddock.Handle, error) {
	r, err := call[*messages.ResumeReply](ctx, a, &messages.ResumeRequest{Handle: a.handle(h)})
	if err != nil {
		return paddock.Handle{}, err
	}
	return a.ours(r.GetHandle()), nil
}

// WriteFile sends the file in one request: a file over the node's message
// limit is refused invalid before anything is sent.
func (a *Adapter) WriteFile(ctx context.Context, h paddock.Handle, path string, mode fs.FileMode, r io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(r, int64(a.n.cfg.MaxMessage)+1))
	if err != nil {
		return &paddock.WriteFailedError{Detail: "remote: reading the file: " + err.Error()}
	}
	if len(data) > a.n.cfg.MaxMessage {
		return &paddock.InvalidError{Detail: fmt.Sprintf("remote: a file over the %d-byte message limit cannot cross", a.n.cfg.MaxMessage)}
	}
	_, err = call[*messages.WriteFileReply](ctx, a, &messages.WriteFileRequest{Handle: a.handle(h), Path: path, Mode: uint32(mode.Perm()), Data: data})
	return err
}

// ReadFile receives the file in one reply; one over the serving node's
// message limit fails invalid.
func (a *Adapter) ReadFile(ctx context.Context, h paddock.Handle, path string) (io.ReadCloser, error) {
	r, err := call[*messages.ReadFileReply](ctx, a, &messages.ReadFileRequest{Handle: a.handle(h), Path: path})
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(r.GetData())), nil
}

func (a *Adapter) Exec(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.ExecOpts) (paddock.ExecResult, error) {
	q := wire.ExecRequestMessage("", a.BuildHandle(h.Name), cmd, opts)
	q.Handle = a.handle(h)
	if opts.Timeout != nil { // the serving runtime bounds the exec; the reply may take a little longer
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *opts.Timeout+a.cfg.Timeout)
		defer cancel()
	}
	r, err := call[*messages.ExecReply](ctx, a, q)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	return wire.ExecResultFromMessage(r), nil
}

func (a *Adapter) ListSessions(ctx context.Context, h paddock.Handle) ([]paddock.Session, error) {
	r, err := call[*messages.ListSessionsReply](ctx, a, &messages.ListSessionsRequest{Handle: a.handle(h)})
	if err != nil {
		return nil, err
	}
	return wire.All(r.GetSessions(), wire.SessionFromMessage), nil
}

func (a *Adapter) TerminateSession(ctx context.Context, h paddock.Handle, sessionID string, opts paddock.TerminateOpts) error {
	_, err := call[*messages.TerminateSessionReply](ctx, a, &messages.TerminateSessionRequest{Handle: a.handle(h), SessionId: sessionID,
		Timeout: wire.DurationMessage(opts.Timeout), Mode: wire.TerminateModeMessage(opts.Mode)})
	return err
}

func (a *Adapter) ApplyNetworkPolicy(ctx context.Context, h paddock.Handle, p paddock.NetworkPolicy) error {
	_, err := call[*messages.ApplyNetworkPolicyReply](ctx, a, &messages.ApplyNetworkPolicyRequest{Handle: a.handle(h), Allow: p.Allow})
	return err
}

func (a *Adapter) PublicURL(ctx context.Context, h paddock.Handle) (string, error) {
	r, err := call[*messages.PublicURLReply](ctx, a, &messages.PublicURLRequest{Handle: a.handle(h)})
	if err != nil {
		return "", err
	}
	return r.GetUrl(), nil
}

func (a *Adapter) CreateCheckpoint(ctx context.Context, h paddock.Handle, opts paddock.CheckpointOpts) (string, error) {
	r, err := call[*messages.CreateCheckpointReply](ctx, a, &messages.CreateCheckpointRequest{Handle: a.handle(h), Comment: opts.Comment})
	if err != nil {
		return "", err
	}
	return r.GetCheckpointId(), nil
}

func (a *Adapter) RestoreCheckpoint(ctx context.Context, h paddock.Handle, checkpointID string) error {
	_, err := call[*messages.RestoreCheckpointReply](ctx, a, &messages.RestoreCheckpointRequest{Handle: a.handle(h), CheckpointId: checkpointID})
	return err
}

func (a *Adapter) ListCheckpoints(ctx context.Context, h paddock.Handle) ([]paddock.Checkpoint, error) {
	r, err := call[*messages.ListCheckpointsReply](ctx, a, &messages.ListCheckpointsRequest{Handle: a.handle(h)})
	if err != nil {
		return nil, err
	}
	return wire.All(r.GetCheckpoints(), wire.CheckpointFromMessage), nil
}

func (a *Adapter) ListDir(ctx context.Context, h paddock.Handle, path string) ([]paddock.FileInfo, error) {
	r, err := call[*messages.ListDirReply](ctx, a, &messages.ListDirRequest{Handle: a.handle(h), Path: path})
	if err != nil {
		return nil, err
	}
	return wire.All(r.GetEntries(), wire.FileInfoFromMessage), nil
}

func (a *Adapter) Stat(ctx context.Context, h paddock.Handle, path string) (paddock.FileInfo, error) {
	r, err := call[*messages.StatReply](ctx, a, &messages.StatRequest{Handle: a.handle(h), Path: path})
	if err != nil {
		return paddock.FileInfo{}, err
	}
	return wire.FileInfoFromMessage(r.GetInfo()), nil
}

func (a *Adapter) Remove(ctx context.Context, h paddock.Handle, path string, opts paddock.RemoveOpts) error {
	_, err := call[*messages.RemoveReply](ctx, a, &messages.RemoveRequest{Handle: a.handle(h), Path: path, Recursive: opts.Recursive})
	return err
}

func (a *Adapter) Rename(ctx context.Context, h paddock.Handle, from, to string) error {
	_, err := call[*messages.RenameReply](ctx, a, &messages.RenameRequest{Handle: a.handle(h), From: from, To: to})
	return err
}

func (a *Adapter) MakeDir(ctx context.Context, h paddock.Handle, path string, opts paddock.MakeDirOpts) error {
	_, err := call[*messages.MakeDirReply](ctx, a, &messages.MakeDirRequest{Handle: a.handle(h), Path: path, Mode: uint32(opts.Mode.Perm()), Parents: opts.Parents})
	return err
}
