package actors

import (
	"context"
	"reflect"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Every operation of the messages protocol is declared once, here: its
// contract name, how the root routes its request, and how a sandbox actor
// serves it. The root's routing, the sandbox actor's dispatch, the failure
// reply of every request (whoever refuses it), the operation named in
// errors, and the facade's calls all come from these declarations. Adding
// an operation touches the contract, the proto, one declaration here (and
// its serve method), the adapters that implement it, and the conformance
// suite.
var (
	opCreate               = declare("create", routeByName[*messages.CreateRequest], (*sandboxActor).create)
	opCreateNew            = declare("create_new", routeByName[*messages.CreateNewRequest], (*sandboxActor).createNew)
	opGet                  = declare("get", nil, (*sandboxActor).get)
	opDestroy              = declare("destroy", nil, (*sandboxActor).destroy)
	opDestroyOnce          = declare("destroy_once", nil, (*sandboxActor).destroyOnce)
	opList                 = declare[*messages.ListRequest, *messages.ListReply]("list", (*root).list, nil)
	opCapabilities         = declare[*messages.CapabilitiesRequest, *messages.CapabilitiesReply]("capabilities", (*root).capabilities, nil)
	opSuspend              = declare("suspend", nil, (*sandboxActor).suspend)
	opResume               = declare("resume", nil, (*sandboxActor).resume)
	opExec                 = declare("exec", (*root).exec, (*sandboxActor).exec)
	opSpawn                = declare("spawn", nil, (*sandboxActor).spawn)
	opWriteStdin           = declare[*messages.WriteStdinRequest, *messages.WriteStdinReply]("write_stdin", (*root).writeStdin, nil)
	opCloseStdin           = declare[*messages.CloseStdinRequest, *messages.CloseStdinReply]("close_stdin", (*root).closeStdin, nil)
	opSignal               = declare[*messages.SignalRequest, *messages.SignalReply]("signal", (*root).signal, nil)
	opResize               = declare[*messages.ResizeRequest, *messages.ResizeReply]("resize", (*root).resize, nil)
	opStopCommand          = declare[*messages.StopCommandRequest, *messages.StopCommandReply]("stop_command", (*root).stopCommand, nil)
	opListSessions         = declare("list_sessions", nil, (*sandboxActor).listSessions)
	opAttach               = declare("attach", nil, (*sandboxActor).attach)
	opWatch                = declare("watch", nil, (*sandboxActor).watch)
	opTerminateSession     = declare("terminate_session", nil, (*sandboxActor).terminateSession)
	opApplyNetworkPolicy   = declare("apply_network_policy", nil, (*sandboxActor).applyNetworkPolicy)
	opPublicURL            = declare("public_url", nil, (*sandboxActor).publicURL)
	opCreateCheckpoint     = declare("create_checkpoint", nil, (*sandboxActor).createCheckpoint)
	opCreateCheckpointOnce = declare("create_checkpoint_once", nil, (*sandboxActor).createCheckpointOnce)
	opRestoreCheckpoint    = declare("restore_checkpoint", nil, (*sandboxActor).restoreCheckpoint)
	opListCheckpoints      = declare("list_checkpoints", nil, (*sandboxActor).listCheckpoints)
	opWriteFile            = declare("write_file", nil, (*sandboxActor).writeFile)
	opReadFile             = declare("read_file", nil, (*sandboxActor).readFile)
	opListDir              = declare("list_dir", nil, (*sandboxActor).listDir)
	opStat                 = declare("stat", nil, (*sandboxActor).stat)
	opRemove               = declare("remove", nil, (*sandboxActor).remove)
	opRename               = declare("rename", nil, (*sandboxActor).rename)
	opMakeDir              = declare("make_dir", nil, (*sandboxActor).makeDir)
	opExpose               = declare("expose", nil, (*sandboxActor).expose)
	opRevoke               = declare("revoke", nil, (*sandboxActor).revoke)
)

// operations indexes the declarations by request type. It is filled in
// init, not by an initializer, so the route and serve methods may look
// operations up without an initialization cycle.
var operations map[reflect.Type]operation

func init() {
	all := []operation{
		opCreate, opCreateNew, opGet, opDestroy, opDestroyOnce, opList, opCapabilities, opSuspend, opResume,
		opExec, opSpawn, opWriteStdin, opCloseStdin, opSignal, opResize, opStopCommand, opListSessions, opAttach,
		opTerminateSession, opApplyNetworkPolicy, opPublicURL, opCreateCheckpoint,
		opCreateCheckpointOnce, opRestoreCheckpoint, opListCheckpoints, opWriteFile, opReadFile,
		opListDir, opStat, opRemove, opRename, opMakeDir, opWatch, opExpose, opRevoke,
	}
	operations = make(map[reflect.Type]operation, len(all))
	for _, o := range all {
		if _, dup := operations[o.requestType()]; dup {
			panic("actors: two declarations of " + o.name())
		}
		operations[o.requestType()] = o
	}
}

// operationOf is the declaration of req's operation, or nil for a message
// that is not a request of the protocol.
func operationOf(req any) operation { return operations[reflect.TypeOf(req)] }

// opName names the operation of a request, for *paddock.OpError.
func opName(req proto.Message) string {
	if o := operationOf(req); o != nil {
		return o.name()
	}
	return string(req.ProtoReflect().Descriptor().Name())
}

// failureReply builds the reply type of req carrying f, so every request is
// answered in its own reply type, whoever refuses it (nil for a message
// that is not a request).
func failureReply(req proto.Message, f *messages.Failure) proto.Message {
	if o := operationOf(req); o != nil {
		return o.answer(req.(request).GetId(), f)
	}
	return nil
}

// request is what every request message has.
type request interface {
	proto.Message
	GetId() string
}

// operation is a declaration seen without its message types.
type operation interface {
	name() string
	requestType() reflect.Type
	requestName() string // the request message's full name
	// route handles the request arriving at the root.
	route(r *root, c *actor.Context, req proto.Message)
	// serve performs the request on a sandbox actor's goroutine and
	// returns its reply; nil when the reply is sent later by another actor.
	serve(s *sandboxActor, cl opCall, req proto.Message) proto.Message
	// answer is the reply to request id, carrying f when it is not nil.
	answer(id string, f *messages.Failure) proto.Message
}

// op is one declaration: requests Q are answered with replies R.
type op[Q request, R reply] struct {
	opName string
	// routeTo handles the request at the root; nil forwards it to the
	// sandbox actor of its handle.
	routeTo func(r *root, c *actor.Context, q Q)
	// do performs it against the adapter, on a sandbox actor's goroutine.
	// It answers the reply without its id, or an error; a nil reply with no
	// error means another actor answers. nil: the root serves the request.
	do func(s *sandboxActor, cl opCall, q Q) (R, error)

	replyType        protoreflect.MessageType
	idField, failure protoreflect.FieldDescriptor
}

// declare makes the declaration of one operation.
func declare[Q request, R reply](name string, route func(*root, *actor.Context, Q), serve func(*sandboxActor, opCall, Q) (R, error)) *op[Q, R] {
	var zero R
	t := zero.ProtoReflect().Type() // valid on a nil message
	fields := t.Descriptor().Fields()
	return &op[Q, R]{opName: name, routeTo: route, do: serve, replyType: t,
		idField: fields.ByName("id"), failure: fields.ByName("failure")}
}

func (o *op[Q, R]) name() string { return o.opName }

func (o *op[Q, R]) requestType() reflect.Type {
	var zero Q
	return reflect.TypeOf(zero)
}

func (o *op[Q, R]) requestName() string {
	var zero Q
	return string(zero.ProtoReflect().Descriptor().FullName())
}

func (o *op[Q, R]) route(r *root, c *actor.Context, req proto.Message) {
	q := req.(Q)
	if o.routeTo != nil {
		o.routeTo(r, c, q)
		return
	}
	hr := any(q).(handleRequest) // every request without a route of its own has a handle
	h := hr.GetHandle()
	r.toSandbox(c, req, paddock.Provider(h.GetProvider()), h.GetName())
}

func (o *op[Q, R]) serve(s *sandboxActor, cl opCall, req proto.Message) proto.Message {
	q := req.(Q)
	reply, err := o.do(s, cl, q)
	if err != nil {
		return o.answer(q.GetId(), s.fail(o.opName, err))
	}
	if any(reply) == any(*new(R)) {
		return nil // answered by another actor
	}
	reply.ProtoReflect().Set(o.idField, protoreflect.ValueOfString(q.GetId()))
	return reply
}

func (o *op[Q, R]) answer(id string, f *messages.Failure) proto.Message {
	m := o.replyType.New()
	m.Set(o.idField, protoreflect.ValueOfString(id))
	if f != nil {
		m.Set(o.failure, protoreflect.ValueOfMessage(f.ProtoReflect()))
	}
	return m.Interface()
}

// invoke sends q, with a fresh id, through the root and waits for its
// reply; any failure comes back wrapped with the operation, provider p and
// sandbox name.
func invoke[Q request, R reply](ctx context.Context, rt *Runtime, o *op[Q, R], p paddock.Provider, name string, q Q) (R, error) {
	r, err := call[R](ctx, rt, func(id string) proto.Message {
		q.ProtoReflect().Set(q.ProtoReflect().Descriptor().Fields().ByName("id"), protoreflect.ValueOfString(id))
		return q
	})
	if err != nil {
		return r, &paddock.OpError{Op: o.opName, Provider: p, Name: name, Err: err}
	}
	return r, wire.ErrorOf(r.GetFailure())
}

// routeByName forwards a request naming its sandbox by provider and name
// (creation) to that sandbox's actor.
func routeByName[Q interface {
	request
	GetProvider() string
	GetName() string
}](r *root, c *actor.Context, q Q) {
	r.toSandbox(c, q, paddock.Provider(q.GetProvider()), q.GetName())
}

// opError wraps err with o's name, as the facade's calls that need no
// actor do.
func (o *op[Q, R]) opError(p paddock.Provider, name string, err error) error {
	return &paddock.OpError{Op: o.opName, Provider: p, Name: name, Err: err}
}
