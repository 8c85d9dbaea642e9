package actors

import (
	"context"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/telemetry"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
)

// measure starts measuring operation op of req on provider p: its span
// is parented on the context of the Runtime call that sent req, if one
// did.
func (rt *Runtime) measure(req proto.Message, p paddock.Provider, op string) *telemetry.Operation {
	if rt.tel == nil {
		return nil
	}
	var parent context.Context
	if r, ok := req.(request); ok {
		if ctx, ok := rt.callers.Load(r.GetId()); ok {
			parent = ctx.(context.Context)
		}
	}
	return rt.tel.Start(parent, p, op)
}

// replyFailure is the failure a reply carries, or nil (no failure, or no
// reply: one sent later by another actor).
func replyFailure(reply proto.Message) *messages.Failure {
	if reply == nil {
		return nil
	}
	m := reply.ProtoReflect()
	fd := m.Descriptor().Fields().ByName("failure")
	if fd == nil || !m.Has(fd) {
		return nil
	}
	f, _ := m.Get(fd).Message().Interface().(*messages.Failure)
	return f
}

// failureOf is the kind and detail of the failure a reply carries ("" for
// none).
func failureOf(reply proto.Message) (paddock.Kind, string) {
	f := replyFailure(reply)
	if f == nil {
		return "", ""
	}
	return paddock.KindOf(wire.ErrorOf(f)), f.GetDetail()
}
