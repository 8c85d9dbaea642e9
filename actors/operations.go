package actors

import (
	"reflect"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Every operation of the messages protocol is declared once, here: how the
// root routes its request and how a sandbox actor serves it; its name
// comes from its messages (messages.Operation). The root's routing, the
// sandbox actor's dispatch, the failure reply of every request (whoever
// refuses it) and the operation named in errors all come from these
// declarations; the calling side of every operation is package client.
// Adding an operation touches the contract, the proto, one declaration
// here (and its serve method), one method of the client, the adapters
// that implement it, and the conformance suite.
//
// operations indexes the declarations by request type. It is filled in
// init, not by an initializer, so the route and serve methods may look
// operations up without an initialization cycle.
var operations map[reflect.Type]operation

func init() {
	operations = index(
		declare(routeByName[*messages.CreateRequest], (*sandboxActor).create),
		declare(routeByName[*messages.CreateNewRequest], (*sandboxActor).createNew),
		declare(nil, (*sandboxActor).get),
		declare(nil, (*sandboxActor).destroy),
		declare(nil, (*sandboxActor).destroyOnce),
		declare[*messages.ListRequest, *messages.ListReply]((*root).list, nil),
		declare[*messages.CapabilitiesRequest, *messages.CapabilitiesReply]((*root).capabilities, nil),
		declare(nil, (*sandboxActor).suspend),
		declare(nil, (*sandboxActor).resume),
		declare((*root).exec, (*sandboxActor).exec),
		declare(routeOpen[*messages.SpawnRequest], (*sandboxActor).spawn),
		declare[*messages.WriteStdinRequest, *messages.WriteStdinReply]((*root).writeStdin, nil),
		declare[*messages.CloseStdinRequest, *messages.CloseStdinReply]((*root).closeStdin, nil),
		declare[*messages.SignalRequest, *messages.SignalReply]((*root).signal, nil),
		declare[*messages.ResizeRequest, *messages.ResizeReply]((*root).resize, nil),
		declare[*messages.StopCommandRequest, *messages.StopCommandReply]((*root).stopCommand, nil),
		declare(nil, (*sandboxActor).listSessions),
		declare(routeOpen[*messages.AttachRequest], (*sandboxActor).attach),
		declare(routeOpen[*messages.WatchRequest], (*sandboxActor).watch),
		declare(nil, (*sandboxActor).terminateSession),
		declare(nil, (*sandboxActor).applyNetworkPolicy),
		declare(nil, (*sandboxActor).publicURL),
		declare(nil, (*sandboxActor).createCheckpoint),
		declare(nil, (*sandboxActor).createCheckpointOnce),
		declare(nil, (*sandboxActor).restoreCheckpoint),
		declare(nil, (*sandboxActor).listCheckpoints),
		declare(nil, (*sandboxActor).deleteCheckpoint),
		declare(routeByName[*messages.ForkRequest], (*sandboxActor).fork),
		declare(nil, (*sandboxActor).writeFile),
		declare(nil, (*sandboxActor).readFile),
		declare(nil, (*sandboxActor).listDir),
		declare(nil, (*sandboxActor).stat),
		declare(nil, (*sandboxActor).remove),
		declare(nil, (*sandboxActor).rename),
		declare(nil, (*sandboxActor).makeDir),
		declare(nil, (*sandboxActor).expose),
		declare(nil, (*sandboxActor).revoke),
	)
}

// index maps each declaration's request type to it; two declarations of
// one request are a bug.
func index(all ...operation) map[reflect.Type]operation {
	m := make(map[reflect.Type]operation, len(all))
	for _, o := range all {
		if _, dup := m[o.requestType()]; dup {
			panic("actors: two declarations of " + o.name())
		}
		m[o.requestType()] = o
	}
	return m
}

// declarationOf is the declaration of requests Q.
func declarationOf[Q request]() operation {
	var zero Q
	return operations[reflect.TypeOf(zero)]
}

// operationOf is the declaration of req's operation, or nil for a message
// that is not a request of the protocol.
func operationOf(req any) operation { return operations[reflect.TypeOf(req)] }

// opName names the operation of a request, for *paddock.OpError.
func opName(req proto.Message) string { return messages.Operation(req) }

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
type op[Q request, R client.Reply] struct {
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
func declare[Q request, R client.Reply](route func(*root, *actor.Context, Q), serve func(*sandboxActor, opCall, Q) (R, error)) operation {
	var zero R
	t := zero.ProtoReflect().Type() // valid on a nil message
	fields := t.Descriptor().Fields()
	return &op[Q, R]{routeTo: route, do: serve, replyType: t,
		idField: fields.ByName("id"), failure: fields.ByName("failure")}
}

func (o *op[Q, R]) name() string {
	var zero Q
	return messages.Operation(zero)
}

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
		return o.answer(q.GetId(), s.fail(o.name(), err))
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

// routeByName forwards a request naming its sandbox by provider and name
// (creation) to that sandbox's actor.
func routeByName[Q interface {
	request
	GetProvider() string
	GetName() string
}](r *root, c *actor.Context, q Q) {
	r.toSandbox(c, q, paddock.Provider(q.GetProvider()), q.GetName())
}
