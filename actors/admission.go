package actors

import (
	"context"
	"errors"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/admission"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
)

// Admission is one provider's admission limits; a zero field is no limit.
// A create beyond them waits for room, up to Wait and its caller's
// context, and is otherwise refused with rate_limited carrying a retry
// hint, never sent to the provider. A rate_limited answer from the
// provider backs every operation on it off for its hint (a second when
// it gave none).
type Admission struct {
	MaxSandboxes int           // sandboxes live through this runtime (created or adopted, not destroyed)
	MaxCreates   int           // creates in flight at once
	Wait         time.Duration // how long a call may wait for room; 0 = refused at once
}

// newGates makes the gates of the providers cfg limits.
func newGates(cfg Config) (map[paddock.Provider]*admission.Gate, error) {
	gates := map[paddock.Provider]*admission.Gate{}
	for p, l := range cfg.Admission {
		if _, err := cfg.Adapters.Lookup(p); err != nil {
			return nil, &paddock.InvalidError{Detail: "runtime config: admission limits for " + string(p) + ", which has no adapter"}
		}
		if l.MaxSandboxes < 0 || l.MaxCreates < 0 || l.Wait < 0 {
			return nil, &paddock.InvalidError{Detail: "runtime config: negative admission limits for " + string(p)}
		}
		gates[p] = admission.New(l.MaxSandboxes, l.MaxCreates, l.Wait)
	}
	return gates, nil
}

// callerContext is the context of the Runtime call that sent req, or the
// runtime's own when a message sent it.
func (rt *Runtime) callerContext(req proto.Message) context.Context {
	if r, ok := req.(request); ok {
		if ctx, ok := rt.callers.Load(r.GetId()); ok {
			return ctx.(context.Context)
		}
	}
	return rt.opsCtx
}

// admitted serves req through its provider's gate, if it has one: a
// create takes a create slot (and a sandbox slot for a new name), any
// operation waits out a back-off; the outcome frees the slots, records a
// destroy, and backs the provider off after a rate_limited answer.
func (s *sandboxActor) admitted(o operation, req proto.Message, serve func() proto.Message) proto.Message {
	g := s.rt.gates[s.provider]
	if g == nil {
		return serve()
	}
	ctx := s.rt.callerContext(req)
	var done func(created bool)
	var err error
	switch req.(type) {
	case *messages.CreateRequest, *messages.CreateNewRequest:
		done, err = g.AdmitCreate(ctx, s.name)
	default:
		err = g.Admit(ctx)
	}
	if err != nil {
		return o.answer(req.(request).GetId(), s.fail(o.name(), err))
	}
	reply := serve()
	kind, _ := failureOf(reply)
	if done != nil {
		done(kind == "")
	}
	if kind == paddock.KindRateLimited {
		g.Throttled(wire.DurationFromMessage(replyFailure(reply).GetRetryAfter()))
	}
	switch req.(type) {
	case *messages.DestroyRequest, *messages.DestroyOnceRequest:
		if kind == "" {
			g.Destroyed(s.name)
		}
	}
	return reply
}

// ownCall runs one of the runtime's own calls to provider p (a lease
// renewal, an adoption, a reap) under p's gate, if it has one: during a
// back-off the call is not made (rate_limited), and a rate_limited answer
// backs the whole provider off, as a caller's would. A panic is an error.
func (rt *Runtime) ownCall(ctx context.Context, p paddock.Provider, call func(ctx context.Context) error) error {
	g := rt.gates[p]
	if g != nil {
		if err := g.Admit(ctx); err != nil {
			return err
		}
	}
	err := recovered(func() error { return call(ctx) })
	var limited *paddock.RateLimitedError
	if g != nil && errors.As(err, &limited) {
		g.Throttled(limited.RetryAfter)
	}
	return err
}
