package actors

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"strings"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
)

// MaxMessageFile bounds a file carried whole in a ReadFileRequest's reply;
// the runtime's Adapter streams files of any size instead.
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
	beat     heartbeat
	ctx      context.Context // ends when the actor stops: the life of its file streams
	cancel   context.CancelFunc
}

func newSandbox(rt *Runtime, a paddock.Adapter, p paddock.Provider, name, key string, root *actor.PID) actor.Producer {
	return func() actor.Receiver {
		return &sandboxActor{rt: rt, a: a, provider: p, name: name, key: key, root: root}
	}
}

// Receive dispatches one request to a goroutine.
func (s *sandboxActor) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		s.ctx, s.cancel = context.WithCancel(s.rt.opsCtx)
		s.rt.tel.SandboxLive(s.provider, 1)
		s.startHeartbeat(c)
	case actor.Stopped:
		s.cancel()
		s.rt.tel.SandboxLive(s.provider, -1)
		s.stopHeartbeat()
	case handleUpdate:
		s.cached = m.h
	case heartbeatTick:
		s.tick(c)
	case heartbeatDone:
		s.beatDone()
	case commandsAdded:
		s.beat.live++
	case commandsGone:
		s.beat.live = max(s.beat.live-1, 0) // a successor under the same id never saw the start
	case *execCall:
		s.beat.used = true
		s.dispatch(c, m.req, opCall{deadline: &m.deadline})
	case *fileCall:
		s.beat.used = true
		s.dispatch(c, m.req, opCall{ctx: s.ctx, file: m})
	case proto.Message:
		s.beat.used = true
		s.dispatch(c, m, opCall{})
	}
}

// opCall is what one dispatched request's goroutine needs.
type opCall struct {
	ctx      context.Context
	h        paddock.Handle
	e        *actor.Engine
	self     *actor.PID
	root     *actor.PID
	replyTo  *actor.PID
	deadline *paddock.ExecDeadline // an exec's, fixed when the root admitted it
	file     *fileCall             // a file stream of the runtime's own transport
	opening  openKey               // an opening request's, from a remote owner (opens.go)
}

// dispatch serves req, as its operation declares, on a tracked goroutine
// and sends the reply, if any, to the request's sender. cl brings what
// the request's carrier adds (an exec's deadline, a file stream and its
// context); the rest it fills in.
func (s *sandboxActor) dispatch(c *actor.Context, req proto.Message, cl opCall) {
	o := operationOf(req)
	if o == nil {
		return
	}
	if cl.ctx == nil {
		cl.ctx = s.rt.opsCtx
	}
	cl.h, cl.e, cl.self, cl.root, cl.replyTo = s.handle(req), c.Engine(), c.PID(), s.root, c.Sender()
	cl.opening, _ = openKeyOf(req, cl.replyTo, cl.e.Address())
	s.rt.goTracked(o.name()+" on "+s.key, func() {
		measured := s.rt.measure(req, s.provider, o.name())
		reply := s.admitted(o, req, func() proto.Message {
			return guardedServe(req, func() proto.Message { return o.serve(s, cl, req) })
		})
		measured.End(failureOf(reply))
		if reply != nil && cl.opening != (openKey{}) {
			cl.e.Send(cl.root, openAnswered{key: cl.opening, reply: reply})
		}
		if reply != nil && cl.replyTo != nil {
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

// The serve methods below perform one operation each (see operations.go):
// they answer the reply without its id, or the error to reply with.

func (s *sandboxActor) create(cl opCall, m *messages.CreateRequest) (*messages.CreateReply, error) {
	got, err := s.a.Create(cl.ctx, s.name, paddock.CreateOpts{Params: m.GetParams(), Lease: s.rt.lease()})
	if err != nil {
		return nil, err
	}
	s.rt.leases.hold(s.provider, s.name)
	cl.e.Send(cl.self, handleUpdate{got})
	return &messages.CreateReply{Handle: wire.HandleMessage(got)}, nil
}

func (s *sandboxActor) createNew(cl opCall, m *messages.CreateNewRequest) (*messages.CreateNewReply, error) {
	opts := paddock.CreateNewOpts{Timeout: wire.DurationFromMessage(m.GetTimeout()), WaitForCapacity: m.GetWaitForCapacity(), Lease: s.rt.lease()}
	got, err := paddock.CreateNew(cl.ctx, s.a, s.name, opts)
	if err != nil {
		return nil, err
	}
	s.rt.leases.hold(s.provider, s.name)
	cl.e.Send(cl.self, handleUpdate{got})
	return &messages.CreateNewReply{Handle: wire.HandleMessage(got)}, nil
}

func (s *sandboxActor) get(cl opCall, _ *messages.GetRequest) (*messages.GetReply, error) {
	info, err := s.a.Get(cl.ctx, cl.h)
	if err != nil {
		return nil, err
	}
	return &messages.GetReply{Info: wire.InfoMessage(info)}, nil
}

// destroy removes the sandbox, then this actor: requests that arrive later
// find a fresh one.
func (s *sandboxActor) destroy(cl opCall, _ *messages.DestroyRequest) (*messages.DestroyReply, error) {
	if err := s.a.Destroy(cl.ctx, cl.h); err != nil {
		return nil, err
	}
	s.rt.leases.release(s.provider, s.name)
	cl.e.Send(cl.root, sandboxGone{key: s.key, pid: cl.self})
	return &messages.DestroyReply{}, nil
}

func (s *sandboxActor) destroyOnce(cl opCall, m *messages.DestroyOnceRequest) (*messages.DestroyOnceReply, error) {
	if err := paddock.DestroyOnce(cl.ctx, s.a, cl.h, paddock.DestroyOnceOpts{Timeout: wire.DurationFromMessage(m.GetTimeout())}); err != nil {
		return nil, err
	}
	s.rt.leases.release(s.provider, s.name)
	cl.e.Send(cl.root, sandboxGone{key: s.key, pid: cl.self})
	return &messages.DestroyOnceReply{}, nil
}

func (s *sandboxActor) suspend(cl opCall, _ *messages.SuspendRequest) (*messages.SuspendReply, error) {
	return &messages.SuspendReply{}, s.a.Suspend(cl.ctx, cl.h)
}

func (s *sandboxActor) resume(cl opCall, _ *messages.ResumeRequest) (*messages.ResumeReply, error) {
	got, err := s.a.Resume(cl.ctx, cl.h)
	if err != nil {
		return nil, err
	}
	s.rt.leases.hold(s.provider, s.name)
	cl.e.Send(cl.self, handleUpdate{got})
	return &messages.ResumeReply{Handle: wire.HandleMessage(got)}, nil
}

func (s *sandboxActor) terminateSession(cl opCall, m *messages.TerminateSessionRequest) (*messages.TerminateSessionReply, error) {
	opts := paddock.TerminateOpts{Timeout: wire.DurationFromMessage(m.GetTimeout()), Mode: wire.TerminateModeFromMessage(m.GetMode())}
	return &messages.TerminateSessionReply{}, paddock.TerminateSession(cl.ctx, s.a, cl.h, m.GetSessionId(), opts)
}

// applyNetworkPolicy applies the policy; an absent list is an empty one
// (deny all), as the wire cannot tell them apart.
func (s *sandboxActor) applyNetworkPolicy(cl opCall, m *messages.ApplyNetworkPolicyRequest) (*messages.ApplyNetworkPolicyReply, error) {
	policy := paddock.NetworkPolicy{Allow: m.GetAllow()}
	if policy.Allow == nil {
		policy.Allow = []string{}
	}
	return &messages.ApplyNetworkPolicyReply{}, paddock.ApplyNetworkPolicy(cl.ctx, s.a, cl.h, policy)
}

func (s *sandboxActor) publicURL(cl opCall, _ *messages.PublicURLRequest) (*messages.PublicURLReply, error) {
	url, err := paddock.PublicURL(cl.ctx, s.a, cl.h)
	return &messages.PublicURLReply{Url: url}, err
}

func (s *sandboxActor) createCheckpoint(cl opCall, m *messages.CreateCheckpointRequest) (*messages.CreateCheckpointReply, error) {
	id, err := paddock.CreateCheckpoint(cl.ctx, s.a, cl.h, paddock.CheckpointOpts{Comment: m.GetComment()})
	return &messages.CreateCheckpointReply{CheckpointId: id}, err
}

func (s *sandboxActor) createCheckpointOnce(cl opCall, m *messages.CreateCheckpointOnceRequest) (*messages.CreateCheckpointOnceReply, error) {
	opts := paddock.CheckpointOnceOpts{Timeout: wire.DurationFromMessage(m.GetTimeout()), OperationID: m.GetOperationId()}
	id, err := paddock.CreateCheckpointOnce(cl.ctx, s.a, cl.h, opts)
	return &messages.CreateCheckpointOnceReply{CheckpointId: id}, err
}

func (s *sandboxActor) restoreCheckpoint(cl opCall, m *messages.RestoreCheckpointRequest) (*messages.RestoreCheckpointReply, error) {
	return &messages.RestoreCheckpointReply{}, paddock.RestoreCheckpoint(cl.ctx, s.a, cl.h, m.GetCheckpointId())
}

func (s *sandboxActor) listCheckpoints(cl opCall, _ *messages.ListCheckpointsRequest) (*messages.ListCheckpointsReply, error) {
	cps, err := paddock.ListCheckpoints(cl.ctx, s.a, cl.h)
	if err != nil {
		return nil, err
	}
	reply := &messages.ListCheckpointsReply{}
	for _, cp := range cps {
		reply.Checkpoints = append(reply.Checkpoints, wire.CheckpointMessage(cp))
	}
	return reply, nil
}

func (s *sandboxActor) deleteCheckpoint(cl opCall, m *messages.DeleteCheckpointRequest) (*messages.DeleteCheckpointReply, error) {
	return &messages.DeleteCheckpointReply{}, paddock.DeleteCheckpoint(cl.ctx, s.a, cl.h, m.GetCheckpointId())
}

// fork makes this actor's sandbox from a checkpoint of the request's
// source, and holds its lease as create does.
func (s *sandboxActor) fork(cl opCall, m *messages.ForkRequest) (*messages.ForkReply, error) {
	got, err := paddock.Fork(cl.ctx, s.a, wire.HandleFromMessage(m.GetSource()), m.GetCheckpointId(), s.name, paddock.ForkOpts{Lease: s.rt.lease()})
	if err != nil {
		return nil, err
	}
	s.rt.leases.hold(s.provider, s.name)
	cl.e.Send(cl.self, handleUpdate{got})
	return &messages.ForkReply{Handle: wire.HandleMessage(got)}, nil
}

// writeFile writes the caller's reader of a file stream, or the bytes the
// message carries.
func (s *sandboxActor) writeFile(cl opCall, m *messages.WriteFileRequest) (*messages.WriteFileReply, error) {
	if err := paddock.ValidatePath(m.GetPath()); err != nil {
		return nil, err
	}
	if cl.file != nil {
		return &messages.WriteFileReply{}, s.writeStream(cl, m)
	}
	return &messages.WriteFileReply{}, s.a.WriteFile(cl.ctx, cl.h, m.GetPath(), wire.FileModeFromMessage(m.GetMode()), bytes.NewReader(m.GetData()))
}

// readFile streams the file to the caller of a file stream, or reads it
// whole into the reply, up to MaxMessageFile.
func (s *sandboxActor) readFile(cl opCall, m *messages.ReadFileRequest) (*messages.ReadFileReply, error) {
	if err := paddock.ValidatePath(m.GetPath()); err != nil {
		return nil, err
	}
	if cl.file != nil {
		return &messages.ReadFileReply{}, s.readStream(cl, m)
	}
	rc, err := s.a.ReadFile(cl.ctx, cl.h, m.GetPath())
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, MaxMessageFile+1))
	if err != nil {
		return nil, &paddock.UnavailableError{Detail: "reading the file: " + err.Error()}
	}
	if len(data) > MaxMessageFile {
		return nil, &paddock.InvalidError{Detail: "file larger than a message carries; read it through the runtime's Adapter"}
	}
	return &messages.ReadFileReply{Data: data}, nil
}

func (s *sandboxActor) listDir(cl opCall, m *messages.ListDirRequest) (*messages.ListDirReply, error) {
	entries, err := paddock.ListDir(cl.ctx, s.a, cl.h, m.GetPath())
	if err != nil {
		return nil, err
	}
	out := make([]*messages.FileInfo, len(entries))
	for i, e := range entries {
		out[i] = wire.FileInfoMessage(e)
	}
	return &messages.ListDirReply{Entries: out}, nil
}

func (s *sandboxActor) stat(cl opCall, m *messages.StatRequest) (*messages.StatReply, error) {
	fi, err := paddock.Stat(cl.ctx, s.a, cl.h, m.GetPath())
	if err != nil {
		return nil, err
	}
	return &messages.StatReply{Info: wire.FileInfoMessage(fi)}, nil
}

func (s *sandboxActor) remove(cl opCall, m *messages.RemoveRequest) (*messages.RemoveReply, error) {
	return &messages.RemoveReply{}, paddock.Remove(cl.ctx, s.a, cl.h, m.GetPath(), paddock.RemoveOpts{Recursive: m.GetRecursive()})
}

func (s *sandboxActor) rename(cl opCall, m *messages.RenameRequest) (*messages.RenameReply, error) {
	return &messages.RenameReply{}, paddock.Rename(cl.ctx, s.a, cl.h, m.GetFrom(), m.GetTo())
}

func (s *sandboxActor) makeDir(cl opCall, m *messages.MakeDirRequest) (*messages.MakeDirReply, error) {
	opts := paddock.MakeDirOpts{Parents: m.GetParents(), Mode: fs.FileMode(m.GetMode())}
	return &messages.MakeDirReply{}, paddock.MakeDir(cl.ctx, s.a, cl.h, m.GetPath(), opts)
}

func (s *sandboxActor) expose(cl opCall, m *messages.ExposeRequest) (*messages.ExposeReply, error) {
	p, err := paddock.Expose(cl.ctx, s.a, cl.h, int(m.GetPort()), paddock.ExposeOpts{TTL: m.GetTtl().AsDuration()})
	if err != nil {
		return nil, err
	}
	return &messages.ExposeReply{Preview: wire.PreviewMessage(p)}, nil
}

func (s *sandboxActor) revoke(cl opCall, m *messages.RevokeRequest) (*messages.RevokeReply, error) {
	return &messages.RevokeReply{}, paddock.Revoke(cl.ctx, s.a, cl.h, wire.PreviewFromMessage(m.GetPreview()))
}

// listSessions lists the sandbox's sessions (attach is required).
func (s *sandboxActor) listSessions(cl opCall, _ *messages.ListSessionsRequest) (*messages.ListSessionsReply, error) {
	if err := paddock.Require(s.a, paddock.CapAttach); err != nil {
		return nil, err
	}
	sessions, err := s.a.ListSessions(cl.ctx, cl.h)
	if err != nil {
		return nil, err
	}
	reply := &messages.ListSessionsReply{}
	for _, sess := range sessions {
		reply.Sessions = append(reply.Sessions, wire.SessionMessage(sess))
	}
	return reply, nil
}

// spawn opens the adapter's stream and hands it to the root, which starts
// the command actor and answers.
func (s *sandboxActor) spawn(cl opCall, m *messages.SpawnRequest) (*messages.SpawnReply, error) {
	cmd := wire.CmdFromMessage(m.GetCmd())
	opts := paddock.SpawnOpts{Stdin: m.GetStdin(), TTY: m.GetTty(), Detachable: m.GetDetachable(), Name: m.GetSessionName(),
		Size: wire.TermSizeFromMessage(m.GetSize())}
	if err := paddock.ValidateSpawn(s.a, cmd, opts); err != nil {
		return nil, err
	}
	owner, err := ownerOf(m.GetOwner(), cl)
	if err != nil {
		return nil, err
	}
	st, err := s.a.Spawn(cl.ctx, cl.h, cmd, opts)
	if err != nil {
		return nil, err
	}
	return nil, s.opened(cl, &streamOpened{stream: st, provider: s.provider, owner: owner, window: int(m.GetWindow()), replyTo: cl.replyTo,
		answer: func(cmd *messages.CommandRef) proto.Message {
			return &messages.SpawnReply{Id: m.GetId(), Command: cmd, SessionId: st.SessionID()}
		}})
}

// attach opens an attach stream and hands it to the root.
func (s *sandboxActor) attach(cl opCall, m *messages.AttachRequest) (*messages.AttachReply, error) {
	if err := paddock.ValidateAttach(s.a, m.GetSessionId()); err != nil {
		return nil, err
	}
	owner, err := ownerOf(m.GetOwner(), cl)
	if err != nil {
		return nil, err
	}
	st, err := s.a.Attach(cl.ctx, cl.h, m.GetSessionId(), paddock.AttachOpts{Stdin: m.GetStdin()})
	if err != nil {
		return nil, err
	}
	skip := [2]uint64{m.GetSkipStdout(), m.GetSkipStderr()}
	return nil, s.opened(cl, &streamOpened{stream: st, provider: s.provider, owner: owner, window: int(m.GetWindow()), skip: skip, replyTo: cl.replyTo,
		answer: func(cmd *messages.CommandRef) proto.Message {
			return &messages.AttachReply{Id: m.GetId(), Command: cmd, SkippedStdout: skip[0], SkippedStderr: skip[1]}
		}})
}

// watch starts a watch and hands it to the root as a subscription whose
// output is its changes.
func (s *sandboxActor) watch(cl opCall, m *messages.WatchRequest) (*messages.WatchReply, error) {
	owner, err := ownerOf(m.GetOwner(), cl)
	if err != nil {
		return nil, err
	}
	w, err := paddock.Watch(cl.ctx, s.a, cl.h, m.GetPath())
	if err != nil {
		return nil, err
	}
	return nil, s.opened(cl, &streamOpened{stream: paddock.WatchStream(w), provider: s.provider, owner: owner, window: int(m.GetWindow()), replyTo: cl.replyTo,
		answer: func(cmd *messages.CommandRef) proto.Message { return &messages.WatchReply{Id: m.GetId(), Command: cmd} }})
}

// ownerOf is the recipient of a command's frames: the one the request
// names, else its sender. There must be one, and it must be able to take
// a stream: the reply address of hollywood's Engine.Request takes exactly
// one message (the reply), so frames sent there would be lost or would
// block; such a request must name its Owner.
func ownerOf(owner *messages.Pid, cl opCall) (*actor.PID, error) {
	pid := owner.ActorPID()
	if pid == nil {
		pid = cl.replyTo
	}
	switch {
	case pid == nil:
		return nil, &paddock.InvalidError{Detail: "no owner for the frames: set one, or send with a sender"}
	case strings.HasPrefix(pid.GetID(), requestReplyKind+"/"):
		return nil, &paddock.InvalidError{Detail: "no owner for the frames: a request's reply address takes only the reply; set Owner"}
	}
	return pid, nil
}

// requestReplyKind is the kind of the one-message reply addresses
// hollywood's Engine.Request makes.
const requestReplyKind = "response"

// exec runs the adapter's Exec under the request's one deadline
// (docs/contract.md#exec-deadlines), fixed when the root admitted it: a
// budget the lookup spent dispatches nothing; the call's context ends with
// the budget, so the adapter stops (and kills) the command then; and a
// result that arrives after the deadline is the timeout error, reporting
// the original timeout. An adapter that ignored the output cap is held to
// it.
func (s *sandboxActor) exec(cl opCall, m *messages.ExecRequest) (*messages.ExecReply, error) {
	cmd, opts := wire.CmdFromMessage(m.GetCmd()), wire.ExecOptsFromMessage(m)
	if cl.deadline == nil { // not admitted by the root: fix the deadline now
		dl, _, err := paddock.StartExec(cl.ctx, cmd, opts, paddock.LimitsOf(s.a), s.rt.cfg.Clock)
		if err != nil {
			return nil, err
		}
		cl.deadline = &dl
	}
	dl := *cl.deadline
	if dl.Finite() && dl.Expired() {
		return nil, dl.Err()
	}
	ctx, cancel := dl.Context(paddock.WithExecDeadline(cl.ctx, dl))
	defer cancel()
	res, err := s.a.Exec(ctx, cl.h, cmd, opts)
	switch {
	case dl.Finite() && dl.Expired():
		return nil, dl.Err()
	case err != nil:
		return nil, err
	case int64(len(res.Stdout)+len(res.Stderr)) > opts.OutputCap():
		return nil, paddock.ErrExecOutputLimit
	}
	return wire.ExecReplyMessage("", res), nil
}

// opened hands a stream to the root, which answers the request once the
// command actor runs; if the runtime is stopping, the stream is closed and
// the request refused instead.
func (s *sandboxActor) opened(cl opCall, so *streamOpened) error {
	if so.window <= 0 {
		so.window = s.rt.cfg.Window
	}
	if s.rt.stopping.Load() {
		_ = so.stream.Close()
		return errStopped
	}
	so.sandbox, so.opening = cl.self, cl.opening
	cl.e.Send(cl.root, so)
	return nil
}
