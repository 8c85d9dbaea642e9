package daemon

import (
	"fmt"

	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// holder carries one message of the service through Connect, whatever its
// type: every RPC is served by one handler shape, its codec knowing the
// type to decode.
type holder struct{ m proto.Message }

// codec encodes a holder's message and decodes into a new message of the
// type it is made for, in the protobuf binary form ("proto") or JSON
// ("json").
type codec struct {
	name string
	into protoreflect.MessageType
}

func (c codec) Name() string { return c.name }

// Marshal encodes a holder's message, or a message of Connect's own (the
// gRPC protocol's status of a failure, with its details).
func (c codec) Marshal(v any) ([]byte, error) { return c.MarshalAppend(nil, v) }

// MarshalAppend is Marshal appending to dst: Connect hands it a pooled
// buffer, so a message of frames costs no new allocation of its size.
func (c codec) MarshalAppend(dst []byte, v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if h, held := v.(*holder); held {
		m, ok = h.m, true
	}
	if !ok {
		return nil, fmt.Errorf("daemon: cannot encode %T", v)
	}
	if c.name == "json" {
		return protojson.MarshalOptions{}.MarshalAppend(dst, m)
	}
	return proto.MarshalOptions{}.MarshalAppend(dst, m)
}

// Unmarshal decodes into a holder a new message of the codec's type, or
// into a message of Connect's own.
func (c codec) Unmarshal(data []byte, v any) error {
	m, ok := v.(proto.Message)
	if h, held := v.(*holder); held {
		h.m = c.into.New().Interface()
		m, ok = h.m, true
	}
	if !ok {
		return fmt.Errorf("daemon: cannot decode into %T", v)
	}
	if c.name == "json" {
		return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(data, m)
	}
	return proto.Unmarshal(data, m)
}

// method is one RPC of the service: its procedure and the types of its
// input and output messages.
type method struct {
	procedure string
	desc      protoreflect.MethodDescriptor
	in, out   protoreflect.MessageType
}

// methods are the service's RPCs, by the name of the request they carry
// (their input message's, or for WriteFile its first message's).
var methods = func() map[protoreflect.FullName]method {
	svc := messages.File_service_proto.Services().ByName("Paddock")
	out := map[protoreflect.FullName]method{}
	for i := range svc.Methods().Len() {
		md := svc.Methods().Get(i)
		in, err1 := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
		res, err2 := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
		if err1 != nil || err2 != nil {
			panic(fmt.Sprintf("daemon: the service's %s has no Go types", md.Name()))
		}
		key := md.Input().FullName()
		if md.IsStreamingClient() { // by the request its first message carries
			key = md.Input().Fields().ByName("request").Message().FullName()
		}
		out[key] = method{procedure: "/" + string(svc.FullName()) + "/" + string(md.Name()), desc: md, in: in, out: res}
	}
	return out
}()

// ServiceName is the service's full name (for health checks and
// reflection).
var ServiceName = string(messages.File_service_proto.Services().ByName("Paddock").FullName())

// ServicePath is the path under which a Server serves every RPC.
var ServicePath = "/" + ServiceName + "/"

// frameField is AnyFrame's oneof: a field per frame type.
var frameField = (&messages.AnyFrame{}).ProtoReflect().Descriptor().Oneofs().ByName("frame")

// anyFrame wraps a frame of the runtime for the wire, in the oneof's
// field of its type.
func anyFrame(f messages.Frame) *messages.AnyFrame {
	a := &messages.AnyFrame{}
	m, fm := a.ProtoReflect(), f.ProtoReflect()
	fields := frameField.Fields()
	for i := range fields.Len() {
		if fd := fields.Get(i); fd.Message() == fm.Descriptor() {
			m.Set(fd, protoreflect.ValueOfMessage(fm))
		}
	}
	return a
}

// frameIn is the frame an AnyFrame carries (nil for none).
func frameIn(a *messages.AnyFrame) messages.Frame {
	m := a.ProtoReflect()
	fd := m.WhichOneof(frameField)
	if fd == nil {
		return nil
	}
	f, _ := m.Get(fd).Message().Interface().(messages.Frame)
	return f
}
