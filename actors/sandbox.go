package actors

import (
	"bytes"
	"context"
	"io"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
)

// MaxMessageFile bounds a file carried whole in a ReadFileRequest's reply;
// the Go facade streams files of any size instead.
const MaxMessageFile = 64 << 20

// sandboxActor serves every request for one sandbox: sandbox/<provider>/<name>.
// It keeps the newest handle the adapter returned (with its private state)
// and runs each provider call on a goroutine of its own, replying straight
// to the original sender; nothing blocks in Receive.
type sandboxActor struct {
	rt       *Runtime
	a        paddock.Adapter
	provider paddock.Provider
	name     string
	key      string
	root     *actor.PID
	cached   paddock.Handle
}

func newSandbox(rt *Runtime, a paddock.Adapter, p paddock.Provider, name, key string, root *actor.PID) actor.Producer {
	return func() actor.Receiver {
		return &sandboxActor{rt: rt, a: a, provider: p, name: name, key: key, root: root}
	}
}

// Receive dispatches one request to a goroutine.
func (s *sandboxActor) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case handleUpdate:
		s.cached = m.h
	case *execCall:
		s.dispatch(c, m.req, func(cl opCall) proto.Message { return s.exec(cl, m) })
	case proto.Message:
		s.dispatch(c, m, func(cl opCall) proto.Message { return s.serve(cl, m) })
	}
}

// opCall is what one dispatched request's goroutine needs.
type opCall struct {
	ctx     context.Context
	h       paddock.Handle
	e       *actor.Engine
	self    *actor.PID
	root    *actor.PID
	replyTo *actor.PID
}

// dispatch runs serve on a tracked goroutine and sends its reply, if any,
// to the request's sender.
func (s *sandboxActor) dispatch(c *actor.Context, req proto.Message, serve func(opCall) proto.Message) {
	cl := opCall{ctx: s.rt.opsCtx, h: s.handle(req), e: c.Engine(), self: c.PID(), root: s.root, replyTo: c.Sender()}
	s.rt.goTracked(string(req.ProtoReflect().Descriptor().Name())+" on "+s.key, func() {
		if reply := guardedServe(req, func() proto.Message { return serve(cl) }); reply != nil && cl.replyTo != nil {
			cl.e.Send(cl.replyTo, reply)
		}
	})
}

// handle is the request's handle with the private state the adapter last
// gave for this sandbox.
func (s *sandboxActor) handle(req proto.Message) paddock.Handle {
	h := s.a.BuildHandle(s.name)
	if hr, ok := req.(handleRequest); ok {
		h = wire.HandleFromMessage(hr.GetHandle())
	}
	if s.cached.Name == h.Name {
		h.Private = s.cached.Private
	}
	return h
}

// fail wraps err with the operation and this sandbox, as a reply failure.
func (s *sandboxActor) fail(op string, err error) *messages.Failure {
	return wire.FailureOf(&paddock.OpError{Op: op, Provider: s.provider, Name: s.name, Err: err})
}

// serve performs one request against the adapter.
func (s *sandboxActor) serve(cl opCall, req proto.Message) proto.Message {
	ctx, a, h := cl.ctx, s.a, cl.h
	switch m := req.(type) {
	case *messages.CreateRequest:
		got, err := a.Create(ctx, s.name, paddock.CreateOpts{Params: m.GetParams()})
		if err != nil {
			return &messages.CreateReply{Id: m.GetId(), Failure: s.fail("create", err)}
		}
		cl.e.Send(cl.self, handleUpdate{got})
		return &messages.CreateReply{Id: m.GetId(), Handle: wire.HandleMessage(got)}
	case *messages.CreateNewRequest:
		opts := paddock.CreateNewOpts{Timeout: wire.DurationFromMessage(m.GetTimeout()), WaitForCapacity: m.GetWaitForCapacity()}
		got, err := paddock.CreateNew(ctx, a, s.name, opts)
		if err != nil {
			return &messages.CreateNewReply{Id: m.GetId(), Failure: s.fail("create_new", err)}
		}
		cl.e.Send(cl.self, handleUpdate{got})
		return &messages.CreateNewReply{Id: m.GetId(), Handle: wire.HandleMessage(got)}
	case *messages.GetRequest:
		info, err := a.Get(ctx, h)
		if err != nil {
			return &messages.GetReply{Id: m.GetId(), Failure: s.fail("get", err)}
		}
		return &messages.GetReply{Id: m.GetId(), Info: wire.InfoMessage(info)}
	case *messages.DestroyRequest:
		if err := a.Destroy(ctx, h); err != nil {
			return &messages.DestroyReply{Id: m.GetId(), Failure: s.fail("destroy", err)}
		}
		cl.e.Send(cl.root, sandboxGone{key: s.key, pid: cl.self})
		return &messages.DestroyReply{Id: m.GetId()}
	case *messages.DestroyOnceRequest:
		err := paddock.DestroyOnce(ctx, a, h, paddock.DestroyOnceOpts{Timeout: wire.DurationFromMessage(m.GetTimeout())})
		if err != nil {
			return &messages.DestroyOnceReply{Id: m.GetId(), Failure: s.fail("destroy_once", err)}
		}
		cl.e.Send(cl.root, sandboxGone{key: s.key, pid: cl.self})
		return &messages.DestroyOnceReply{Id: m.GetId()}
	case *messages.SuspendRequest:
		return &messages.SuspendReply{Id: m.GetId(), Failure: s.failure("suspend", a.Suspend(ctx, h))}
	case *messages.ResumeRequest:
		got, err := a.Resume(ctx, h)
		if err != nil {
			return &messages.ResumeReply{Id: m.GetId(), Failure: s.fail("resume", err)}
		}
		cl.e.Send(cl.self, handleUpdate{got})
		return &messages.ResumeReply{Id: m.GetId(), Handle: wire.HandleMessage(got)}
	case *messages.SpawnRequest:
		return s.spawn(cl, m)
	case *messages.AttachRequest:
		return s.attach(cl, m)
	case *messages.ListSessionsRequest:
		return s.listSessions(cl, m)
	case *messages.TerminateSessionRequest:
		opts := paddock.TerminateOpts{Timeout: wire.DurationFromMessage(m.GetTimeout()), Mode: wire.TerminateModeFromMessage(m.GetMode())}
		err := paddock.TerminateSession(ctx, a, h, m.GetSessionId(), opts)
		return &messages.TerminateSessionReply{Id: m.GetId(), Failure: s.failure("terminate_session", err)}
	case *messages.ApplyNetworkPolicyRequest:
		policy := paddock.NetworkPolicy{Allow: m.GetAllow()}
		if policy.Allow == nil {
			policy.Allow = []string{}
		}
		err := paddock.ApplyNetworkPolicy(ctx, a, h, policy)
		return &messages.ApplyNetworkPolicyReply{Id: m.GetId(), Failure: s.failure("apply_network_policy", err)}
	case *messages.PublicURLRequest:
		url, err := paddock.PublicURL(ctx, a, h)
		return &messages.PublicURLReply{Id: m.GetId(), Url: url, Failure: s.failure("public_url", err)}
	default:
		return s.serveMore(cl, req)
	}
}

// serveMore performs the checkpoint, file and preview requests.
func (s *sandboxActor) serveMore(cl opCall, req proto.Message) proto.Message {
	ctx, a, h := cl.ctx, s.a, cl.h
	switch m := req.(type) {
	case *messages.CreateCheckpointRequest:
		id, err := paddock.CreateCheckpoint(ctx, a, h, paddock.CheckpointOpts{Comment: m.GetComment()})
		return &messages.CreateCheckpointReply{Id: m.GetId(), CheckpointId: id, Failure: s.failure("create_checkpoint", err)}
	case *messages.CreateCheckpointOnceRequest:
		opts := paddock.CheckpointOnceOpts{Timeout: wire.DurationFromMessage(m.GetTimeout()), OperationID: m.GetOperationId()}
		id, err := paddock.CreateCheckpointOnce(ctx, a, h, opts)
		return &messages.CreateCheckpointOnceReply{Id: m.GetId(), CheckpointId: id, Failure: s.failure("create_checkpoint_once", err)}
	case *messages.RestoreCheckpointRequest:
		err := paddock.RestoreCheckpoint(ctx, a, h, m.GetCheckpointId())
		return &messages.RestoreCheckpointReply{Id: m.GetId(), Failure: s.failure("restore_checkpoint", err)}
	case *messages.ListCheckpointsRequest:
		cps, err := paddock.ListCheckpoints(ctx, a, h)
		reply := &messages.ListCheckpointsReply{Id: m.GetId(), Failure: s.failure("list_checkpoints", err)}
		for _, cp := range cps {
			reply.Checkpoints = append(reply.Checkpoints, wire.CheckpointMessage(cp))
		}
		return reply
	case *messages.WriteFileRequest:
		err := paddock.ValidatePath(m.GetPath())
		if err == nil {
			err = a.WriteFile(ctx, h, m.GetPath(), wire.FileModeFromMessage(m.GetMode()), bytes.NewReader(m.GetData()))
		}
		return &messages.WriteFileReply{Id: m.GetId(), Failure: s.failure("write_file", err)}
	case *messages.ReadFileRequest:
		data, err := s.readFile(ctx, h, m.GetPath())
		return &messages.ReadFileReply{Id: m.GetId(), Data: data, Failure: s.failure("read_file", err)}
	case *messages.ExposeRequest:
		p, err := paddock.Expose(ctx, a, h, int(m.GetPort()), paddock.ExposeOpts{TTL: m.GetTtl().AsDuration()})
		if err != nil {
			return &messages.ExposeReply{Id: m.GetId(), Failure: s.fail("expose", err)}
		}
		return &messages.ExposeReply{Id: m.GetId(), Preview: wire.PreviewMessage(p)}
	case *messages.RevokeRequest:
		err := paddock.Revoke(ctx, a, h, wire.PreviewFromMessage(m.GetPreview()))
		return &messages.RevokeReply{Id: m.GetId(), Failure: s.failure("revoke", err)}
	}
	return nil
}

// failure is fail for an error that may be nil.
func (s *sandboxActor) failure(op string, err error) *messages.Failure {
	if err == nil {
		return nil
	}
	return s.fail(op, err)
}

// readFile reads a whole file for a message reply, up to MaxMessageFile.
func (s *sandboxActor) readFile(ctx context.Context, h paddock.Handle, path string) ([]byte, error) {
	if err := paddock.ValidatePath(path); err != nil {
		return nil, err
	}
	rc, err := s.a.ReadFile(ctx, h, path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, MaxMessageFile+1))
	if err != nil {
		return nil, &paddock.UnavailableError{Detail: "reading the file: " + err.Error()}
	}
	if len(data) > MaxMessageFile {
		return nil, &paddock.InvalidError{Detail: "file larger than a message carries; read it through the Go facade"}
	}
	return data, nil
}

// listSessions lists the sandbox's sessions (attach is required).
func (s *sandboxActor) listSessions(cl opCall, m *messages.ListSessionsRequest) proto.Message {
	if err := paddock.Require(s.a, paddock.CapAttach); err != nil {
		return &messages.ListSessionsReply{Id: m.GetId(), Failure: s.fail("list_sessions", err)}
	}
	sessions, err := s.a.ListSessions(cl.ctx, cl.h)
	if err != nil {
		return &messages.ListSessionsReply{Id: m.GetId(), Failure: s.fail("list_sessions", err)}
	}
	reply := &messages.ListSessionsReply{Id: m.GetId()}
	for _, sess := range sessions {
		reply.Sessions = append(reply.Sessions, wire.SessionMessage(sess))
	}
	return reply
}

// spawn opens the adapter's stream and hands it to the root, which starts
// the command actor and answers.
func (s *sandboxActor) spawn(cl opCall, m *messages.SpawnRequest) proto.Message {
	cmd := wire.CmdFromMessage(m.GetCmd())
	opts := paddock.SpawnOpts{Stdin: m.GetStdin(), TTY: m.GetTty(), Detachable: m.GetDetachable(), Name: m.GetSessionName()}
	if err := paddock.ValidateSpawn(s.a, cmd, opts); err != nil {
		return &messages.SpawnReply{Id: m.GetId(), Failure: s.fail("spawn", err)}
	}
	owner := m.GetOwner().ActorPID()
	if owner == nil {
		owner = cl.replyTo
	}
	st, err := s.a.Spawn(cl.ctx, cl.h, cmd, opts)
	if err != nil {
		return &messages.SpawnReply{Id: m.GetId(), Failure: s.fail("spawn", err)}
	}
	return s.opened(cl, m, &streamOpened{stream: st, provider: s.provider, owner: owner, window: int(m.GetWindow()), replyTo: cl.replyTo, reqID: m.GetId()})
}

// attach opens an attach stream and hands it to the root.
func (s *sandboxActor) attach(cl opCall, m *messages.AttachRequest) proto.Message {
	if err := paddock.ValidateAttach(s.a, m.GetSessionId()); err != nil {
		return &messages.AttachReply{Id: m.GetId(), Failure: s.fail("attach", err)}
	}
	owner := m.GetOwner().ActorPID()
	if owner == nil {
		owner = cl.replyTo
	}
	st, err := s.a.Attach(cl.ctx, cl.h, m.GetSessionId(), paddock.AttachOpts{Stdin: m.GetStdin()})
	if err != nil {
		return &messages.AttachReply{Id: m.GetId(), Failure: s.fail("attach", err)}
	}
	return s.opened(cl, m, &streamOpened{stream: st, provider: s.provider, owner: owner, window: int(m.GetWindow()), replyTo: cl.replyTo, reqID: m.GetId(), attach: true})
}

// exec runs the adapter's Exec under the request's one deadline
// (docs/contract.md#exec-deadlines): a budget the lookup spent dispatches
// nothing; the call's context ends with the budget, so the adapter stops
// (and kills) the command then; and a result that arrives after the
// deadline is the timeout error, reporting the original timeout.
func (s *sandboxActor) exec(cl opCall, ec *execCall) proto.Message {
	m, dl := ec.req, ec.deadline
	if dl.Finite() && dl.Expired() {
		return &messages.ExecReply{Id: m.GetId(), Failure: s.fail("exec", dl.Err())}
	}
	ctx, cancel := dl.Context(cl.ctx)
	defer cancel()
	opts := wire.ExecOptsFromMessage(m)
	res, err := s.a.Exec(ctx, cl.h, wire.CmdFromMessage(m.GetCmd()), opts)
	switch {
	case dl.Finite() && dl.Expired():
		err = dl.Err()
	case err == nil && int64(len(res.Stdout)+len(res.Stderr)) > opts.OutputCap():
		err = paddock.ErrExecOutputLimit // an adapter that ignored the cap
	}
	if err != nil {
		return &messages.ExecReply{Id: m.GetId(), Failure: s.fail("exec", err)}
	}
	return wire.ExecReplyMessage(m.GetId(), res)
}

// opened hands a stream to the root; if the runtime is stopping the stream
// is closed and the request refused instead.
func (s *sandboxActor) opened(cl opCall, req proto.Message, so *streamOpened) proto.Message {
	if so.owner == nil {
		_ = so.stream.Close()
		return failureReply(req, s.fail(opName(req), &paddock.InvalidError{Detail: "no owner for the frames: set one, or send with a sender"}))
	}
	if so.window <= 0 {
		so.window = s.rt.cfg.Window
	}
	if s.rt.stopping.Load() {
		_ = so.stream.Close()
		return failureReply(req, s.fail(opName(req), errStopped))
	}
	cl.e.Send(cl.root, so)
	return nil
}
