package messages_test

import (
	"strings"
	"testing"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// fill sets every field of m to a non-zero value, recursing into messages,
// so that a round trip exercises every field of every type.
func fill(t *testing.T, m protoreflect.Message, depth int) {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			mp.Set(protoreflect.ValueOfString("key").MapKey(), scalar(t, fd.MapValue()))
		case fd.IsList():
			list := m.Mutable(fd).List()
			for j := 0; j < 2; j++ {
				if fd.Kind() == protoreflect.MessageKind {
					el := list.NewElement()
					if depth < 3 {
						fill(t, el.Message(), depth+1)
					}
					list.Append(el)
				} else {
					list.Append(scalar(t, fd))
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			if depth < 3 {
				fill(t, m.Mutable(fd).Message(), depth+1)
			}
		default:
			m.Set(fd, scalar(t, fd))
		}
	}
}

// scalar returns a non-zero value for a scalar or enum field.
func scalar(t *testing.T, fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("s-" + string(fd.Name()))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte{0, 1, 2, 0xff})
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(-7)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(-1 << 40)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(1 << 31)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(1 << 63)
	case protoreflect.EnumKind:
		values := fd.Enum().Values()
		return protoreflect.ValueOfEnum(values.Get(values.Len() - 1).Number())
	case protoreflect.MessageKind:
		t.Fatalf("map value %s is a message; extend scalar", fd.FullName())
	}
	t.Fatalf("unhandled kind %s of %s", fd.Kind(), fd.FullName())
	return protoreflect.Value{}
}

func TestEveryMessageRoundTrips(t *testing.T) {
	t.Parallel()
	fd, err := protoregistry.GlobalFiles.FindFileByPath("messages.proto")
	require.NoError(t, err)
	msgs := fd.Messages()
	require.Greater(t, msgs.Len(), 60, "frames, values and a request / reply pair per operation")
	for i := 0; i < msgs.Len(); i++ {
		desc := msgs.Get(i)
		t.Run(string(desc.Name()), func(t *testing.T) {
			mt, err := protoregistry.GlobalTypes.FindMessageByName(desc.FullName())
			require.NoError(t, err)
			in := mt.New()
			fill(t, in, 0)
			b, err := proto.Marshal(in.Interface())
			require.NoError(t, err)
			if desc.Fields().Len() > 0 {
				require.NotEmpty(t, b)
			}
			out := mt.New().Interface()
			require.NoError(t, proto.Unmarshal(b, out))
			assert.True(t, proto.Equal(in.Interface(), out), "%s differs after a round trip", desc.Name())
		})
	}
}

// Every request of the protocol has its reply, both carry a correlation
// id, and the reply a failure; the list of operations is the protocol's
// own, never written out by hand.
func TestEveryOperationHasARequestAndReply(t *testing.T) {
	t.Parallel()
	msgs := messages.File_messages_proto.Messages()
	requests := 0
	for i := range msgs.Len() {
		req := msgs.Get(i)
		op, ok := strings.CutSuffix(string(req.Name()), "Request")
		if !ok {
			continue
		}
		requests++
		reply := msgs.ByName(protoreflect.Name(op + "Reply"))
		require.NotNil(t, reply, "%s has a reply", req.Name())
		assert.NotNil(t, req.Fields().ByName("id"), "%s carries a correlation id", req.Name())
		assert.NotNil(t, reply.Fields().ByName("id"), "%s carries a correlation id", reply.Name())
		assert.NotNil(t, reply.Fields().ByName("failure"), "%s carries a failure", reply.Name())
	}
	assert.Greater(t, requests, 30, "a request per operation")
}

func TestFrames(t *testing.T) {
	t.Parallel()
	frames := []messages.Frame{
		&messages.Stdout{Ref: "r", Seq: 1, Data: []byte("a")},
		&messages.Stderr{Ref: "r", Seq: 2, Data: []byte("b")},
		&messages.Exit{Ref: "r", Seq: 3, Code: 3, OutputFrames: 2},
		&messages.Error{Ref: "r", Seq: 3, Reason: "closed_before_exit", OutputFrames: 2},
	}
	for i, f := range frames {
		assert.Equal(t, "r", f.GetRef())
		assert.Equal(t, i >= 2, messages.IsTerminal(f), "%T", f)
	}
}

func TestPidConversion(t *testing.T) {
	t.Parallel()
	pid := actor.NewPID("127.0.0.1:4000", "sandbox/fake/box")
	back := messages.PidOf(pid).ActorPID()
	assert.True(t, pid.Equals(back))
	assert.Nil(t, messages.PidOf(nil))
	assert.Nil(t, (*messages.Pid)(nil).ActorPID())
}
