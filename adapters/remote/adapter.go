package remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Adapter drives the sandboxes of one provider of a runtime on another
// node: it is a client.Client whose every operation is a request of
// package messages to that runtime, and whose every stream an owner proxy
// on this node that receives its frames, re-attaches when the link lost
// some, and reports node_lost when the serving node goes silent
// (docs/contract.md#remote). Register it in the runtime of this node like
// any adapter.
type Adapter struct {
	*client.Client
	t *transport
}

// Close stops the adapter's actor; streams it opened end on their own.
func (a *Adapter) Close() {
	<-a.t.n.Engine.Poison(a.t.client).Done()
}

// transport carries requests over this node's links to the serving root
// and hands each reply to the call waiting for it.
type transport struct {
	n      *Node
	cfg    Config
	root   *actor.PID
	client *actor.PID // the sender of every request; receives the replies
	caps   paddock.CapabilitySet

	nextID  atomic.Uint64
	prefix  string
	waiting sync.Map // request id -> chan proto.Message
}

// receive hands each reply to the call waiting for it.
func (t *transport) receive(c *actor.Context) {
	m, ok := c.Message().(interface {
		proto.Message
		GetId() string
	})
	if !ok {
		return
	}
	if ch, ok := t.waiting.LoadAndDelete(m.GetId()); ok {
		ch.(chan proto.Message) <- m
	}
}

// newID is a request id unique to this adapter.
func (t *transport) newID() string {
	return t.prefix + strconv.FormatUint(t.nextID.Add(1), 10)
}

// Capabilities is what the serving provider advertised when the adapter
// connected.
func (t *transport) Capabilities(paddock.Provider) paddock.CapabilitySet { return t.caps }

// Call sends q with a fresh id and waits for its reply, until ctx ends or,
// without a deadline, the adapter's timeout (plus hold).
func (t *transport) Call(ctx context.Context, q client.Request, hold time.Duration) (client.Reply, error) {
	t.serving(q)
	id := t.newID()
	setField(q, "id", protoreflect.ValueOfString(id))
	if size := proto.Size(q); size > t.n.cfg.MaxMessage {
		return nil, &paddock.InvalidError{Detail: fmt.Sprintf("remote: the request is %d bytes, over the %d-byte message limit", size, t.n.cfg.MaxMessage)}
	}
	if _, ok := ctx.Deadline(); !ok || hold > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, hold+t.cfg.Timeout)
		defer cancel()
	}
	ch := make(chan proto.Message, 1)
	t.waiting.Store(id, ch)
	defer t.waiting.Delete(id)
	t.n.Engine.SendWithSender(t.root, q, t.client)
	var again <-chan time.Time // the link can lose a request or its reply
	if repeatable(q) {
		tick := time.NewTicker(t.cfg.Lease / 4)
		defer tick.Stop()
		again = tick.C
	}
	for {
		select {
		case m := <-ch:
			r, ok := m.(client.Reply)
			if !ok {
				return nil, &paddock.UnavailableError{Detail: fmt.Sprintf("remote: a %T answered a %T", m, q)}
			}
			t.ours(r)
			return r, nil
		case <-again:
			t.n.Engine.SendWithSender(t.root, q, t.client) // the same id: the first reply to come answers
		case <-ctx.Done():
			// unavailable, and the context's end too: a caller that ended it
			// itself can tell
			return nil, fmt.Errorf("%w: %w", &paddock.UnavailableError{Detail: "remote: no reply from " + t.cfg.Peer}, ctx.Err())
		}
	}
}

// repeatable reports whether serving q twice does what serving it once
// does, by the contract: a destroy (an absent sandbox is success) and the
// requests that only read. Such a request unanswered for a quarter of a
// lease is sent again, as an opening is; any other is sent once, since a
// second exec or write would be a second effect.
func repeatable(q client.Request) bool {
	switch q.(type) {
	case *messages.DestroyRequest, *messages.GetRequest, *messages.CapabilitiesRequest, *messages.ListRequest,
		*messages.ListSessionsRequest, *messages.ReadFileRequest, *messages.ListDirRequest, *messages.StatRequest,
		*messages.ListCheckpointsRequest, *messages.DeleteCheckpointRequest:
		return true
	}
	return false
}

// Upload sends the file in one request: a file over the node's message
// limit is refused invalid(file_too_large), and a reader's failure or an
// ended ctx answered, before anything is sent.
func (t *transport) Upload(ctx context.Context, q *messages.WriteFileRequest, r io.Reader) (client.Reply, error) {
	src := paddock.NewWriteSource(r)
	data, err := io.ReadAll(io.LimitReader(src, int64(t.n.cfg.MaxMessage)+1))
	if err != nil {
		return nil, src.Failure(err)
	}
	if len(data) > t.n.cfg.MaxMessage {
		return nil, &paddock.InvalidError{Detail: fmt.Sprintf("%s: remote: a file over the %d-byte message limit cannot cross", paddock.DetailFileTooLarge, t.n.cfg.MaxMessage)}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", &paddock.UnavailableError{Detail: "remote: the write was not sent"}, err)
	}
	q.Data = data
	// Once sent, the write is the serving node's to finish: the answer is
	// its outcome, waited for (within the transport's timeout) even when
	// ctx ends, so a write that landed never answers as failed.
	return t.Call(context.WithoutCancel(ctx), q, 0)
}

// Download receives the file in one reply; one over the serving node's
// message limit fails invalid.
func (t *transport) Download(ctx context.Context, q *messages.ReadFileRequest) (io.ReadCloser, client.Reply, error) {
	r, err := t.Call(ctx, q, 0)
	if err != nil || r.GetFailure() != nil {
		return nil, r, err
	}
	data, _ := r.(*messages.ReadFileReply) // any other type is the client's to refuse
	return io.NopCloser(bytes.NewReader(data.GetData())), r, nil
}

// serving names the serving provider in q, whatever tag its handle or
// command carries on this node.
func (t *transport) serving(q proto.Message) {
	p := protoreflect.ValueOfString(string(t.cfg.Provider))
	m := q.ProtoReflect()
	fields := m.Descriptor().Fields()
	if fd := fields.ByName("provider"); fd != nil && fd.Kind() == protoreflect.StringKind {
		m.Set(fd, p)
	}
	for _, name := range []protoreflect.Name{"handle", "command"} {
		if fd := fields.ByName(name); fd != nil && m.Has(fd) {
			setField(m.Mutable(fd).Message().Interface(), "provider", p)
		}
	}
}

// ours tags a handle the serving runtime answered with this adapter's
// provider.
func (t *transport) ours(r proto.Message) {
	m := r.ProtoReflect()
	if fd := m.Descriptor().Fields().ByName("handle"); fd != nil && m.Has(fd) {
		setField(m.Mutable(fd).Message().Interface(), "provider", protoreflect.ValueOfString(string(t.cfg.Provider)))
	}
}

// setField sets one field of m by name.
func setField(m proto.Message, name protoreflect.Name, v protoreflect.Value) {
	r := m.ProtoReflect()
	r.Set(r.Descriptor().Fields().ByName(name), v)
}
