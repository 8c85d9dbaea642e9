package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// DialOptions configure Dial.
type DialOptions struct {
	// HTTPClient carries the RPCs; it must speak HTTP/2 for WriteFile (a
	// client stream). Default: http.DefaultClient.
	HTTPClient connect.HTTPClient
	// ChunkBytes is how much of a file one WriteFile message carries
	// (default DefaultChunkBytes).
	ChunkBytes int
	// Timeout bounds a call whose context has no deadline (default 1
	// minute, plus an exec's own hold).
	Timeout time.Duration
	// Token is sent as the bearer token of every call (none when zero).
	Token paddock.Secret
}

// Transport is the client of a daemon: a client.Transport, so
// client.New(t, p) drives provider p of the server's runtime. Use Dial.
type Transport struct {
	base string
	opts DialOptions
	rpcs map[protoreflect.FullName]*connect.Client[holder, holder]
}

var _ client.Transport = (*Transport)(nil)

// Dial returns the client of the daemon at baseURL (scheme, host and
// port); nothing is sent until the first call.
func Dial(baseURL string, opts DialOptions) (*Transport, error) {
	if !strings.HasPrefix(baseURL, "http://") && !strings.HasPrefix(baseURL, "https://") {
		return nil, &paddock.InvalidError{Detail: "daemon: the address must be an http:// or https:// URL"}
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	if opts.ChunkBytes <= 0 {
		opts.ChunkBytes = DefaultChunkBytes
	}
	if opts.Timeout <= 0 {
		opts.Timeout = time.Minute
	}
	t := &Transport{base: strings.TrimSuffix(baseURL, "/"), opts: opts, rpcs: map[protoreflect.FullName]*connect.Client[holder, holder]{}}
	for name, m := range methods {
		t.rpcs[name] = connect.NewClient[holder, holder](opts.HTTPClient, t.base+m.procedure,
			connect.WithCodec(codec{name: "proto", into: m.out}), connect.WithReadMaxBytes(DefaultMaxMessageBytes),
			connect.WithAcceptCompression("gzip", nil, nil), // none: see the server's handler
			connect.WithInterceptors(bearer(opts.Token)))
	}
	return t, nil
}

// String names the daemon the transport reaches.
func (t *Transport) String() string { return "daemon.Transport(" + t.base + ")" }

// rpc is the client of q's RPC.
func (t *Transport) rpc(q proto.Message) (*connect.Client[holder, holder], error) {
	c := t.rpcs[q.ProtoReflect().Descriptor().FullName()]
	if c == nil {
		return nil, &paddock.InvalidError{Detail: fmt.Sprintf("daemon: %s is not a request of the service", q.ProtoReflect().Descriptor().Name())}
	}
	return c, nil
}

// failed is the error of an RPC the server did not answer with a reply.
func (t *Transport) failed(err error) error {
	if ce := new(connect.Error); errors.As(err, &ce) {
		switch ce.Code() {
		case connect.CodeInvalidArgument:
			return fmt.Errorf("%w: %w", &paddock.InvalidError{Detail: "daemon: " + ce.Message()}, err)
		case connect.CodeUnauthenticated, connect.CodePermissionDenied:
			return fmt.Errorf("%w: %w", &paddock.DeniedError{Detail: "daemon: " + ce.Message()}, err)
		}
	}
	return fmt.Errorf("%w: %w", &paddock.UnavailableError{Detail: "daemon " + t.base + ": " + err.Error()}, err)
}

// bounded is ctx with the transport's timeout (plus hold) when it has no
// deadline.
func (t *Transport) bounded(ctx context.Context, hold time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok && hold == 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, t.opts.Timeout+hold)
}

// Capabilities asks the server what provider p's adapter advertises; an
// unreachable server or unknown provider advertises nothing.
func (t *Transport) Capabilities(p paddock.Provider) paddock.CapabilitySet {
	r, err := t.Call(context.Background(), &messages.CapabilitiesRequest{Provider: string(p)}, 0)
	reply, ok := r.(*messages.CapabilitiesReply)
	if err != nil || !ok || reply.GetFailure() != nil {
		return paddock.CapabilitySet{}
	}
	caps := make([]paddock.Capability, 0, len(reply.GetCapabilities()))
	for _, c := range reply.GetCapabilities() {
		caps = append(caps, paddock.Capability(c))
	}
	return paddock.NewCapabilitySet(caps...)
}

// Call sends q and returns its reply.
func (t *Transport) Call(ctx context.Context, q client.Request, hold time.Duration) (client.Reply, error) {
	c, err := t.rpc(q)
	if err != nil {
		return nil, err
	}
	ctx, cancel := t.bounded(ctx, hold)
	defer cancel()
	return t.answer(c.CallUnary(ctx, connect.NewRequest(&holder{m: q})))
}

// answer is the reply an RPC answered: its message, or the reply a failure
// carries (a failure is a reply, not an error); an error only when no
// reply came.
func (t *Transport) answer(res *connect.Response[holder], err error) (client.Reply, error) {
	if r, ok := replyOf(err); ok {
		return r, nil
	}
	if err != nil {
		return nil, t.failed(err)
	}
	r, ok := res.Msg.m.(client.Reply)
	if !ok {
		return nil, &paddock.UnavailableError{Detail: "daemon: a reply of the wrong type"}
	}
	return r, nil
}

// Upload sends q, then r's bytes in chunks.
func (t *Transport) Upload(ctx context.Context, q *messages.WriteFileRequest, r io.Reader) (client.Reply, error) {
	c, err := t.rpc(q)
	if err != nil {
		return nil, err
	}
	ctx, cancel := t.bounded(ctx, 0)
	defer cancel()
	out := c.CallClientStream(ctx)
	sendErr := out.Send(&holder{m: &messages.WriteFileChunk{Item: &messages.WriteFileChunk_Request{Request: q}}})
	buf := make([]byte, t.opts.ChunkBytes)
	for sendErr == nil {
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			sendErr = out.Send(&holder{m: &messages.WriteFileChunk{Item: &messages.WriteFileChunk_Data{Data: buf[:n]}}})
		}
		if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
			break
		}
		if rerr != nil {
			cancel() // no end sent: the server writes nothing of it
			_, _ = out.CloseAndReceive()
			if paddock.KindOf(rerr) != "" {
				return nil, rerr // the caller's own answer (a cap of theirs, say)
			}
			return nil, fmt.Errorf("%w: %w", &paddock.InvalidError{Detail: "daemon: reading the file to write"}, rerr)
		}
	}
	if sendErr == nil {
		sendErr = out.Send(&holder{m: &messages.WriteFileChunk{Item: &messages.WriteFileChunk_End{End: true}}})
	}
	return t.answer(out.CloseAndReceive())
}

// Download sends q; the file's bytes follow its reply.
func (t *Transport) Download(ctx context.Context, q *messages.ReadFileRequest) (io.ReadCloser, client.Reply, error) {
	in, first, cancel, failed, err := t.serverStream(ctx, q)
	if failed != nil || err != nil {
		return nil, failed, err
	}
	reply := first.(*messages.ReadFileChunk).GetReply()
	if reply == nil || reply.GetFailure() != nil {
		cancel()
		_ = in.Close()
		if reply == nil {
			return nil, nil, &paddock.UnavailableError{Detail: "daemon: ReadFile: no reply first"}
		}
		return nil, reply, nil
	}
	return &fileReader{in: in, cancel: cancel}, reply, nil
}

// serverStream opens q's server stream and receives its first message
// within ctx (which bounds that only: cancel ends the stream). A failure
// the server answered is its reply, the stream ended; an error is the
// transport's own.
func (t *Transport) serverStream(ctx context.Context, q client.Request) (*connect.ServerStreamForClient[holder], proto.Message, context.CancelFunc, client.Reply, error) {
	c, err := t.rpc(q)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	in, err := c.CallServerStream(sctx, connect.NewRequest(&holder{m: q}))
	if err != nil {
		cancel()
		return nil, nil, nil, nil, t.failed(err)
	}
	first, err := receiveFirst(ctx, in, cancel)
	if r, ok := replyOf(err); ok {
		return nil, nil, nil, r, nil
	}
	if err != nil {
		return nil, nil, nil, nil, t.failed(err)
	}
	return in, first, cancel, nil, nil
}

// receiveFirst receives a server stream's first message within ctx; on
// any failure the stream is ended (cancel).
func receiveFirst(ctx context.Context, in *connect.ServerStreamForClient[holder], cancel context.CancelFunc) (proto.Message, error) {
	stop := context.AfterFunc(ctx, cancel) // the caller's context bounds the reply, not the stream
	ok := in.Receive()
	if !stop() || !ok {
		cancel()
		err := in.Err()
		_ = in.Close()
		if err == nil {
			err = errors.Join(errors.New("the stream ended before its reply"), ctx.Err())
		}
		return nil, err
	}
	return in.Msg().m, nil
}

// fileReader reads a ReadFile stream's chunks.
type fileReader struct {
	in     *connect.ServerStreamForClient[holder]
	cancel context.CancelFunc
	rest   []byte
	done   bool
}

func (f *fileReader) Read(p []byte) (int, error) {
	for len(f.rest) == 0 {
		if f.done {
			return 0, io.EOF
		}
		if !f.in.Receive() {
			f.done = true
			if err := f.in.Err(); err != nil {
				return 0, &paddock.UnavailableError{Detail: "daemon: reading the file: " + err.Error()}
			}
			return 0, io.EOF
		}
		f.rest = f.in.Msg().m.(*messages.ReadFileChunk).GetData()
	}
	n := copy(p, f.rest)
	f.rest = f.rest[n:]
	return n, nil
}

func (f *fileReader) Close() error {
	f.cancel()
	return f.in.Close()
}

// bearer sets the Authorization header of every call to token (none when
// it is zero).
func bearer(token paddock.Secret) connect.Interceptor {
	return authInterceptor{token: token}
}

type authInterceptor struct{ token paddock.Secret }

func (a authInterceptor) set(h http.Header) {
	if !a.token.IsZero() {
		h.Set("Authorization", "Bearer "+a.token.Reveal())
	}
}

func (a authInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		a.set(req.Header())
		return next(ctx, req)
	}
}

func (a authInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		a.set(conn.RequestHeader())
		return conn
	}
}

func (a authInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
