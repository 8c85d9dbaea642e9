package daemon

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"

	"connectrpc.com/connect"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Defaults of Config.
const (
	DefaultMaxMessageBytes = 16 << 20  // a message the server reads, and a file chunk's bound
	DefaultChunkBytes      = 256 << 10 // the bytes of a file per ReadFile message
)

// Config configures a Server.
type Config struct {
	// Transport reaches the runtime the server serves: its own
	// (actors.Runtime.Transport()). Required.
	Transport client.Transport
	// MaxMessageBytes bounds a message the server reads (default
	// DefaultMaxMessageBytes); a larger one is refused (resource_exhausted).
	MaxMessageBytes int
	// ChunkBytes is how much of a file one ReadFile message carries
	// (default DefaultChunkBytes).
	ChunkBytes int
	// Logger receives the server's logs; the zero Logger is silent.
	Logger zerolog.Logger
}

// Server serves the service Paddock over one runtime. Use New.
type Server struct {
	cfg      Config
	mux      *http.ServeMux
	commands commands // the live commands of tenants' streams
}

// New returns a server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Transport == nil {
		return nil, &paddock.InvalidError{Detail: "daemon: a Transport is required"}
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.ChunkBytes <= 0 || cfg.ChunkBytes > cfg.MaxMessageBytes/2 {
		cfg.ChunkBytes = min(DefaultChunkBytes, cfg.MaxMessageBytes/2)
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux()}
	for _, m := range methods {
		s.mux.Handle(m.procedure, s.handler(m))
	}
	return s, nil
}

// ServeHTTP serves the RPCs under ServicePath.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// handler is one RPC's handler: the codecs decode its input type.
func (s *Server) handler(m method) http.Handler {
	opts := []connect.HandlerOption{
		connect.WithCodec(codec{name: "proto", into: m.in}),
		connect.WithCodec(codec{name: "json", into: m.in}),
		connect.WithReadMaxBytes(s.cfg.MaxMessageBytes),
		// No compression: it costs more than it saves on a machine's own
		// network, and HTTP/2's flow control then bounds frames, not
		// compressed bytes (output compressing a thousandfold would let a
		// client that reads nothing buffer thousands of frames).
		connect.WithCompression("gzip", nil, nil),
	}
	switch {
	case m.desc.IsStreamingClient():
		return connect.NewClientStreamHandler(m.procedure, s.writeFile, opts...)
	case m.desc.IsStreamingServer() && m.in.Descriptor().FullName() == readFileRequest:
		return connect.NewServerStreamHandler(m.procedure, s.readFile, opts...)
	case m.desc.IsStreamingServer():
		return connect.NewServerStreamHandler(m.procedure, s.subscribe, opts...)
	}
	return connect.NewUnaryHandler(m.procedure, s.unary, opts...)
}

var readFileRequest = (&messages.ReadFileRequest{}).ProtoReflect().Descriptor().FullName()

// request is the client.Request a holder carries, its id and owner the
// server's to set.
func request(h *holder) (client.Request, error) {
	q, ok := h.m.(client.Request)
	if !ok {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("daemon: not a request"))
	}
	m := q.ProtoReflect()
	for _, name := range []protoreflect.Name{"id", "owner"} {
		if f := m.Descriptor().Fields().ByName(name); f != nil {
			m.Clear(f)
		}
	}
	return q, nil
}

// unavailable is the Connect error of a request the runtime did not
// answer.
func unavailable(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return connect.NewError(connect.CodeDeadlineExceeded, err)
	}
	return connect.NewError(connect.CodeUnavailable, err)
}

// unary serves a unary RPC: the request to the runtime, its reply back.
func (s *Server) unary(ctx context.Context, req *connect.Request[holder]) (*connect.Response[holder], error) {
	q, err := request(req.Msg)
	if err != nil {
		return nil, err
	}
	tenant := tenantOf(ctx)
	if r := s.foreignCommand(q, tenant); r != nil {
		if err := replyError(r); err != nil {
			return nil, err
		}
		return connect.NewResponse(&holder{m: r}), nil
	}
	scopeRequest(q, tenant)
	r, err := s.cfg.Transport.Call(ctx, q, 0)
	if err != nil {
		return nil, unavailable(err)
	}
	scopeReply(r, tenant)
	if err := replyError(r); err != nil {
		return nil, err
	}
	return connect.NewResponse(&holder{m: r}), nil
}

// subscribe serves Spawn, Attach and Watch: the reply, then the frames as
// they come, the terminal one last. The client leaving detaches the
// stream (the command goes on).
func (s *Server) subscribe(ctx context.Context, req *connect.Request[holder], out *connect.ServerStream[holder]) error {
	q, err := request(req.Msg)
	if err != nil {
		return err
	}
	tenant := tenantOf(ctx)
	scopeRequest(q, tenant)
	st, r, err := s.cfg.Transport.Open(ctx, q)
	if err != nil {
		return unavailable(err)
	}
	scopeReply(r, tenant)
	item := &messages.StreamItem{}
	switch r := r.(type) {
	case *messages.SpawnReply:
		item.Item = &messages.StreamItem_Spawn{Spawn: r}
	case *messages.AttachReply:
		item.Item = &messages.StreamItem_Attach{Attach: r}
	case *messages.WatchReply:
		item.Item = &messages.StreamItem_Watch{Watch: r}
	}
	if st == nil {
		if err := replyError(r); err != nil {
			return err
		}
		return connect.NewError(connect.CodeInternal, errors.New("daemon: a stream opened without its reply"))
	}
	defer st.Close()
	if tenant != "" {
		ref := r.(interface{ GetCommand() *messages.CommandRef }).GetCommand().GetRef()
		s.commands.open(ref, tenant)
		defer s.commands.close(ref)
	}
	if err := out.Send(&holder{m: item}); err != nil {
		return err
	}
	if frames, ok := st.(interface{ C() <-chan messages.Frame }); ok { // the runtime's own stream
		return relay(ctx, frames.C(), out)
	}
	var seq, outputs uint64
	for {
		ev, err := st.Next(ctx)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return unavailable(err)
		}
		seq++
		f := anyFrame(frameOf(ev, seq, outputs))
		if !ev.Kind.Terminal() {
			outputs++
		}
		if err := out.Send(&holder{m: &messages.StreamItem{Item: &messages.StreamItem_Frames{Frames: &messages.StreamFrames{Frames: []*messages.AnyFrame{f}}}}}); err != nil {
			return err
		}
		if ev.Kind.Terminal() {
			return nil
		}
	}
}

// foreignCommand answers a control (stdin, a signal, a resize, stdin's
// end, a stop) of a tenant's request whose command is not one its own
// streams opened and hold: as for a command that exited (a stop, which
// succeeds for any command, with success). nil for every other request.
func (s *Server) foreignCommand(q client.Request, tenant string) client.Reply {
	if tenant == "" {
		return nil
	}
	c, ok := q.(interface{ GetCommand() *messages.CommandRef })
	if !ok || s.commands.owns(c.GetCommand().GetRef(), tenant) {
		return nil
	}
	if _, stop := q.(*messages.StopCommandRequest); stop {
		return &messages.StopCommandReply{}
	}
	r := methods[q.ProtoReflect().Descriptor().FullName()].out.New()
	f := &messages.Failure{Kind: messages.ErrorKind_ERROR_KIND_COMMAND_EXITED, Detail: "no live command of this tenant's"}
	r.Set(r.Descriptor().Fields().ByName("failure"), protoreflect.ValueOfMessage(f.ProtoReflect()))
	return r.Interface().(client.Reply)
}

// Bounds of one StreamFrames message: the frames ready at once go out
// together, up to these.
const (
	batchFrames = 64
	batchBytes  = 1 << 20
)

// relay sends a FrameStream's frames as they come, those ready at once in
// one message, until the terminal frame or the end of its frames.
func relay(ctx context.Context, frames <-chan messages.Frame, out *connect.ServerStream[holder]) error {
	for {
		var batch []*messages.AnyFrame
		size, terminal, open := 0, false, true
		select {
		case f, ok := <-frames:
			if !ok {
				return nil // closed without its terminal frame: the client says so
			}
			batch, size, terminal = append(batch, anyFrame(f)), frameSize(f), messages.IsTerminal(f)
		case <-ctx.Done():
			return unavailable(ctx.Err())
		}
		yielded := false
	ready:
		for !terminal && len(batch) < batchFrames && size < batchBytes {
			select {
			case f, ok := <-frames:
				if !ok {
					open = false
					break ready
				}
				batch, size, terminal = append(batch, anyFrame(f)), size+frameSize(f), messages.IsTerminal(f)
				yielded = false
			default:
				if yielded {
					break ready
				}
				// The stream's pump hands frames over one at a time: let it
				// run once before the batch goes, so what is ready goes
				// together (never a wait: nothing is held for later).
				runtime.Gosched()
				yielded = true
			}
		}
		if err := out.Send(&holder{m: &messages.StreamItem{Item: &messages.StreamItem_Frames{Frames: &messages.StreamFrames{Frames: batch}}}}); err != nil {
			return err
		}
		if terminal || !open {
			return nil
		}
	}
}

// frameSize is about the bytes a frame takes on the wire.
func frameSize(f messages.Frame) int {
	switch f := f.(type) {
	case *messages.Stdout:
		return len(f.GetData())
	case *messages.Stderr:
		return len(f.GetData())
	}
	return 64
}

// frameOf is the frame of an event, the seq-th of its stream after
// outputs output frames.
func frameOf(ev paddock.Event, seq, outputs uint64) messages.Frame {
	switch ev.Kind {
	case paddock.EventExit:
		return wire.ExitFrame("", seq, outputs, ev.Code)
	case paddock.EventError:
		reason, kind := wire.ErrorFrameFields(ev.Err)
		return wire.ErrorFrame("", seq, outputs, reason, "", kind)
	}
	return wire.OutputFrame("", seq, ev)
}

// readFile serves ReadFile: the reply, then the file in chunks.
func (s *Server) readFile(ctx context.Context, req *connect.Request[holder], out *connect.ServerStream[holder]) error {
	q, err := request(req.Msg)
	if err != nil {
		return err
	}
	tenant := tenantOf(ctx)
	scopeRequest(q, tenant)
	rc, r, err := s.cfg.Transport.Download(ctx, q.(*messages.ReadFileRequest))
	if err != nil {
		return unavailable(err)
	}
	scopeReply(r, tenant)
	if rc == nil {
		if err := replyError(r); err != nil {
			return err
		}
		return connect.NewError(connect.CodeInternal, errors.New("daemon: a file opened without its content"))
	}
	defer rc.Close()
	reply, _ := r.(*messages.ReadFileReply)
	if err := out.Send(&holder{m: &messages.ReadFileChunk{Item: &messages.ReadFileChunk_Reply{Reply: reply}}}); err != nil {
		return err
	}
	buf := make([]byte, s.cfg.ChunkBytes)
	for {
		n, err := io.ReadFull(rc, buf)
		if n > 0 {
			if err := out.Send(&holder{m: &messages.ReadFileChunk{Item: &messages.ReadFileChunk_Data{Data: buf[:n]}}}); err != nil {
				return err
			}
		}
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil
		case err != nil:
			return unavailable(err)
		}
	}
}

// writeFile serves WriteFile: the request first, then the bytes, read by
// the runtime as they come.
func (s *Server) writeFile(ctx context.Context, in *connect.ClientStream[holder]) (*connect.Response[holder], error) {
	if !in.Receive() {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.Join(errors.New("daemon: WriteFile: no request"), in.Err()))
	}
	first, _ := in.Msg().m.(*messages.WriteFileChunk)
	q := first.GetRequest()
	if q == nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("daemon: WriteFile: the request comes first"))
	}
	if _, err := request(&holder{m: q}); err != nil { // its id is the server's to set
		return nil, err
	}
	tenant := tenantOf(ctx)
	scopeRequest(q, tenant)
	body := &chunkReader{in: in}
	r, err := s.cfg.Transport.Upload(ctx, q, body)
	if err != nil {
		return nil, unavailable(err)
	}
	scopeReply(r, tenant)
	if body.err != nil && r.GetFailure() == nil {
		return nil, body.err
	}
	if err := replyError(r); err != nil {
		return nil, err
	}
	return connect.NewResponse(&holder{m: r}), nil
}

// chunkReader reads a WriteFile stream's bytes, chunk by chunk, as the
// runtime asks for them.
type chunkReader struct {
	in    *connect.ClientStream[holder]
	rest  []byte
	ended bool  // the end came: every byte was sent
	err   error // what ended the stream other than its end
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for len(c.rest) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		if c.ended {
			return 0, io.EOF
		}
		if !c.in.Receive() {
			// Without its end the content is not whole: nothing is written.
			c.err = connect.NewError(connect.CodeCanceled, errors.Join(errors.New("daemon: WriteFile: the stream stopped before its end"), c.in.Err()))
			return 0, c.err
		}
		chunk, _ := c.in.Msg().m.(*messages.WriteFileChunk)
		switch chunk.GetItem().(type) {
		case *messages.WriteFileChunk_Data:
			c.rest = chunk.GetData()
		case *messages.WriteFileChunk_End:
			c.ended = true
		default:
			c.err = connect.NewError(connect.CodeInvalidArgument, errors.New("daemon: WriteFile: one request per stream, then data, then end"))
		}
	}
	n := copy(p, c.rest)
	c.rest = c.rest[n:]
	return n, nil
}

// HTTP2Config is the HTTP/2 configuration the daemon's streams want, for
// its server and its clients' transports: frames and windows large enough
// that a stream's chunks are not cut into 16 KiB frames and its writer
// does not wait for a window update every few of them, and up to
// MaxStreamsPerConnection streams on one connection (an orchestrator
// following many commands needs no more connections, each a handshake).
func HTTP2Config() *http.HTTP2Config {
	return &http.HTTP2Config{
		MaxConcurrentStreams:          MaxStreamsPerConnection,
		MaxReadFrameSize:              1 << 20,
		MaxReceiveBufferPerConnection: 64 << 20,
		MaxReceiveBufferPerStream:     8 << 20,
	}
}

// MaxStreamsPerConnection bounds the streams (RPCs) open at once on one
// HTTP/2 connection of a server configured with HTTP2Config; a client
// wanting more opens another connection.
const MaxStreamsPerConnection = 1024
