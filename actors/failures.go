package actors

import (
	"io"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"github.com/paddockhq/paddock/supervisor"
	"google.golang.org/protobuf/proto"
)

// failureReply builds the reply type of req carrying f, so every request is
// answered in its own reply type, whoever refuses it.
func failureReply(req proto.Message, f *messages.Failure) proto.Message {
	switch m := req.(type) {
	case *messages.CreateRequest:
		return &messages.CreateReply{Id: m.GetId(), Failure: f}
	case *messages.CreateNewRequest:
		return &messages.CreateNewReply{Id: m.GetId(), Failure: f}
	case *messages.GetRequest:
		return &messages.GetReply{Id: m.GetId(), Failure: f}
	case *messages.DestroyRequest:
		return &messages.DestroyReply{Id: m.GetId(), Failure: f}
	case *messages.DestroyOnceRequest:
		return &messages.DestroyOnceReply{Id: m.GetId(), Failure: f}
	case *messages.ListRequest:
		return &messages.ListReply{Id: m.GetId(), Failure: f}
	case *messages.SuspendRequest:
		return &messages.SuspendReply{Id: m.GetId(), Failure: f}
	case *messages.ResumeRequest:
		return &messages.ResumeReply{Id: m.GetId(), Failure: f}
	case *messages.ExecRequest:
		return &messages.ExecReply{Id: m.GetId(), Failure: f}
	case *messages.SpawnRequest:
		return &messages.SpawnReply{Id: m.GetId(), Failure: f}
	case *messages.WriteStdinRequest:
		return &messages.WriteStdinReply{Id: m.GetId(), Failure: f}
	case *messages.CloseStdinRequest:
		return &messages.CloseStdinReply{Id: m.GetId(), Failure: f}
	case *messages.StopCommandRequest:
		return &messages.StopCommandReply{Id: m.GetId(), Failure: f}
	case *messages.ListSessionsRequest:
		return &messages.ListSessionsReply{Id: m.GetId(), Failure: f}
	case *messages.AttachRequest:
		return &messages.AttachReply{Id: m.GetId(), Failure: f}
	case *messages.TerminateSessionRequest:
		return &messages.TerminateSessionReply{Id: m.GetId(), Failure: f}
	case *messages.ApplyNetworkPolicyRequest:
		return &messages.ApplyNetworkPolicyReply{Id: m.GetId(), Failure: f}
	case *messages.PublicURLRequest:
		return &messages.PublicURLReply{Id: m.GetId(), Failure: f}
	case *messages.CreateCheckpointRequest:
		return &messages.CreateCheckpointReply{Id: m.GetId(), Failure: f}
	case *messages.CreateCheckpointOnceRequest:
		return &messages.CreateCheckpointOnceReply{Id: m.GetId(), Failure: f}
	case *messages.RestoreCheckpointRequest:
		return &messages.RestoreCheckpointReply{Id: m.GetId(), Failure: f}
	case *messages.ListCheckpointsRequest:
		return &messages.ListCheckpointsReply{Id: m.GetId(), Failure: f}
	case *messages.WriteFileRequest:
		return &messages.WriteFileReply{Id: m.GetId(), Failure: f}
	case *messages.ReadFileRequest:
		return &messages.ReadFileReply{Id: m.GetId(), Failure: f}
	case *messages.ExposeRequest:
		return &messages.ExposeReply{Id: m.GetId(), Failure: f}
	case *messages.RevokeRequest:
		return &messages.RevokeReply{Id: m.GetId(), Failure: f}
	}
	return nil
}

// opName names the operation of a request, for *paddock.OpError.
func opName(req proto.Message) string {
	name := string(req.ProtoReflect().Descriptor().Name())
	return snake(name[:len(name)-len("Request")])
}

// snake turns "CreateNew" into "create_new".
func snake(s string) string {
	out := make([]byte, 0, len(s)+4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			if i > 0 && !(s[i-1] >= 'A' && s[i-1] <= 'Z') {
				out = append(out, '_')
			}
			c += 'a' - 'A'
		}
		out = append(out, c)
	}
	return string(out)
}

// guardedServe runs serve and turns a panic (in an adapter, say) into the
// request's failure reply: a caller always gets an answer, never silence.
func guardedServe(req proto.Message, serve func() proto.Message) (reply proto.Message) {
	defer func() {
		if v := recover(); v != nil {
			reply = failureReply(req, wire.FailureOf(panicError(v)))
		}
	}()
	return serve()
}

// panicError is an adapter panic as the taxonomy error every path answers.
func panicError(v any) error {
	return &paddock.UnavailableError{Detail: supervisor.ReasonAdapterPanic + ": " + supervisor.PanicText(v)}
}

// recovered runs an adapter call on the caller's goroutine, turning a panic
// into unavailable(adapter_panic): an adapter bug never crashes the
// embedding program.
func recovered(call func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError(v)
		}
	}()
	return call()
}

// recoveringReader is an adapter's file reader whose panics are errors.
type recoveringReader struct{ io.ReadCloser }

func (r recoveringReader) Read(p []byte) (n int, err error) {
	err = recovered(func() (err error) { n, err = r.ReadCloser.Read(p); return err })
	return n, err
}

func (r recoveringReader) Close() error { return recovered(r.ReadCloser.Close) }
