package actors

import (
	"context"
	"errors"
	"sync"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/client"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// replyBox receives the replies to the facade's blocking calls. It is a
// hollywood Processer, not an actor: a reply is handed straight to the
// waiting call's channel on the sender's goroutine, with no inbox hop.
type replyBox struct {
	pid *actor.PID

	mu      sync.Mutex
	waiting map[string]chan proto.Message
}

func newReplyBox(pid *actor.PID) *replyBox {
	return &replyBox{pid: pid, waiting: map[string]chan proto.Message{}}
}

func (b *replyBox) Start()                  {}
func (b *replyBox) PID() *actor.PID         { return b.pid }
func (b *replyBox) Invoke([]actor.Envelope) {}
func (b *replyBox) Shutdown()               {}

// Send delivers a reply to the call waiting for its id; a reply nobody waits
// for any more (its caller gave up) is dropped.
func (b *replyBox) Send(_ *actor.PID, msg any, _ *actor.PID) {
	reply, ok := msg.(interface {
		proto.Message
		GetId() string
	})
	if !ok {
		return
	}
	b.mu.Lock()
	ch := b.waiting[reply.GetId()]
	delete(b.waiting, reply.GetId())
	b.mu.Unlock()
	if ch != nil {
		ch <- reply // capacity 1, one reply per id
	}
}

func (b *replyBox) expect(id string) chan proto.Message {
	ch := make(chan proto.Message, 1)
	b.mu.Lock()
	b.waiting[id] = ch
	b.mu.Unlock()
	return ch
}

func (b *replyBox) forget(id string) {
	b.mu.Lock()
	delete(b.waiting, id)
	b.mu.Unlock()
}

// errStopped is the answer of a call made to a stopped runtime.
var errStopped = &paddock.UnavailableError{Detail: "runtime stopped"}

// request sends q with a fresh id to the root actor, as wrap makes it
// (nil: q itself), and waits for its reply, ctx, or the runtime's stop.
func (rt *Runtime) request(ctx context.Context, q client.Request, wrap func(client.Request) any) (client.Reply, error) {
	if rt.stopping.Load() {
		return nil, errStopped
	}
	id := rt.newID()
	setID(q, id)
	if rt.tel.Tracing() || len(rt.gates) > 0 {
		rt.callers.Store(id, ctx)
		defer rt.callers.Delete(id)
	}
	var msg any = q
	if wrap != nil {
		msg = wrap(q)
	}
	ch := rt.replies.expect(id)
	rt.engine.SendWithSender(rt.root, msg, rt.replies.pid)
	select {
	case reply := <-ch:
		r, ok := reply.(client.Reply)
		if !ok {
			return nil, &paddock.ProviderError{Provider: "runtime", Detail: "unexpected reply type"}
		}
		return r, nil
	case <-ctx.Done():
		rt.replies.forget(id)
		return nil, contextError(ctx.Err())
	case <-rt.stopped:
		rt.replies.forget(id)
		return nil, errStopped
	}
}

// setID sets a request's id field.
func setID(q proto.Message, id string) {
	m := q.ProtoReflect()
	m.Set(m.Descriptor().Fields().ByName("id"), protoreflect.ValueOfString(id))
}

// contextError is the taxonomy error for a caller's context that ended: the
// outcome is unknown (unavailable), and errors.Is still finds the context
// error.
func contextError(err error) error {
	return &ctxError{err: err}
}

type ctxError struct{ err error }

func (e *ctxError) Error() string        { return "unavailable: " + e.err.Error() }
func (e *ctxError) Kind() paddock.Kind   { return paddock.KindUnavailable }
func (e *ctxError) Unwrap() error        { return e.err }
func (e *ctxError) Is(target error) bool { return errors.Is(paddock.ErrUnavailable, target) }
