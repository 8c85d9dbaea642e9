package actors

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Adapter returns provider p through the runtime, as a paddock.Adapter
// with every optional interface: each call travels through the actors and
// their guards, each stream is a *FrameStream, and the paddock helpers
// work on it as on the adapter itself. Where the adapter behind it lacks
// an operation, the runtime answers ErrNotSupported; for a provider that
// is not registered, every call fails with *paddock.UnknownProviderError.
func (rt *Runtime) Adapter(p paddock.Provider) *client.Client { return client.New(rt.Transport(), p) }

// Transport is the runtime's own transport, for a client.Client whose
// streams are owned another way (an actor of one's own, say).
func (rt *Runtime) Transport() client.Transport { return inProcess{rt} }

// inProcess carries requests to the root actor and replies back through
// the reply box; its streams are FrameStreams, and its files travel
// through the sandbox actor without being held in memory.
type inProcess struct{ rt *Runtime }

var _ client.HostPather = inProcess{}

// Capabilities reads the adapter's on every call, with no actor hop.
func (t inProcess) Capabilities(p paddock.Provider) paddock.CapabilitySet {
	a, err := t.rt.cfg.Adapters.Lookup(p)
	if err != nil {
		return paddock.CapabilitySet{}
	}
	return a.Capabilities()
}

// HostPath maps path through the handle's adapter, with no actor hop.
func (t inProcess) HostPath(h paddock.Handle, path string) string {
	a, err := t.rt.cfg.Adapters.Lookup(h.Provider)
	if err != nil {
		return path
	}
	return paddock.HostPath(a, h, path)
}

// Call needs no hold: the runtime's replies come whenever they come, and
// only ctx bounds the wait.
func (t inProcess) Call(ctx context.Context, q client.Request, _ time.Duration) (client.Reply, error) {
	return t.rt.request(ctx, q, nil)
}

// Open owns the stream's frames by a FrameStream.
func (t inProcess) Open(ctx context.Context, q client.Request) (paddock.Stream, client.Reply, error) {
	s := t.rt.newFrameStream()
	m := q.ProtoReflect()
	m.Set(m.Descriptor().Fields().ByName("owner"), protoreflect.ValueOfMessage(messages.PidOf(s.sink.owner).ProtoReflect()))
	r, err := t.rt.request(ctx, q, nil)
	opened, ok := r.(interface{ GetCommand() *messages.CommandRef })
	if err != nil || !ok || r.GetFailure() != nil {
		s.release()
		return nil, r, err
	}
	s.sub, s.sessionID = wire.CommandFromMessage(opened.GetCommand()), sessionOf(q, r)
	return s, r, nil
}

// sessionOf is the session a stream's request started or joined ("" for
// none).
func sessionOf(q client.Request, r client.Reply) string {
	if sr, ok := r.(*messages.SpawnReply); ok {
		return sr.GetSessionId()
	}
	if aq, ok := q.(*messages.AttachRequest); ok {
		return aq.GetSessionId()
	}
	return ""
}

// Upload has the sandbox actor write r into the file; r is fenced, so
// nothing reads it once Upload returns. When ctx ends first, the adapter's
// write is cancelled and Upload waits for its answer, up to
// Config.WriteSettle, rather than answer an unknown outcome at once: a
// write is all or nothing, and the caller learns which. A write that
// failed because r did answers r's error too, for errors.As.
func (t inProcess) Upload(ctx context.Context, q *messages.WriteFileRequest, r io.Reader) (client.Reply, error) {
	body := &fencedReader{r: r}
	wait, stop := paddock.Settle(ctx, t.rt.cfg.WriteSettle)
	reply, err := t.rt.request(wait, q, func(q client.Request) any { return &fileCall{req: q, caller: ctx, body: body} })
	stop()
	if err != nil && ctx.Err() != nil {
		err = contextError(ctx.Err())
	}
	body.fence()
	if err == nil && reply.GetFailure() != nil && body.err != nil {
		return nil, fmt.Errorf("%w (the content's reader failed: %w)", wire.ErrorOf(reply.GetFailure()), body.err)
	}
	return reply, err
}

// Download has the sandbox actor open the file and stream it to the
// returned reader; a reader that arrives after ctx ended is closed.
func (t inProcess) Download(ctx context.Context, q *messages.ReadFileRequest) (io.ReadCloser, client.Reply, error) {
	out := &handoff{}
	r, err := t.rt.request(ctx, q, func(q client.Request) any { return &fileCall{req: q, caller: ctx, out: out} })
	rc := out.take()
	if err != nil || r.GetFailure() != nil {
		if rc != nil {
			_ = rc.Close()
		}
		return nil, r, err
	}
	return rc, r, nil
}
