package e2b

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"connectrpc.com/connect"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b/envd/processpb"
	"github.com/paddockhq/paddock/adapters/e2b/envd/processpb/processpbconnect"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// keepaliveSeconds is the keepalive interval asked of envd on process
// streams (never 0 or less: that crashes envd).
const keepaliveSeconds = "50"

// envdBase is the base URL of a sandbox's envd: EnvdURL when set, else
// the sandbox's own host, https://49983-<id>.<domain>, the domain being
// the control plane's host without its "api." label.
func (a *Adapter) envdBase(id string) string {
	if a.cfg.EnvdURL != "" {
		return strings.TrimRight(a.cfg.EnvdURL, "/")
	}
	u, err := url.Parse(a.cfg.BaseURL)
	if err != nil {
		return ""
	}
	return "https://" + strconv.Itoa(EnvdPort) + "-" + id + "." + strings.TrimPrefix(u.Host, "api.")
}

// envdHeaders are the headers of every envd call: the proxy's routing
// headers and the in-guest user, and on streams the keepalive interval.
type envdHeaders struct {
	sandbox string
	user    string
}

func (e envdHeaders) set(h http.Header, stream bool) {
	h.Set("E2b-Sandbox-Id", e.sandbox)
	h.Set("E2b-Sandbox-Port", strconv.Itoa(EnvdPort))
	h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(e.user+":")))
	if stream {
		h.Set("Keepalive-Ping-Interval", keepaliveSeconds)
	}
}

func (e envdHeaders) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		e.set(req.Header(), false)
		return next(ctx, req)
	}
}

func (e envdHeaders) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		e.set(conn.RequestHeader(), true)
		return conn
	}
}

func (e envdHeaders) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// processes is the Process service of sandbox id: unary calls on the
// bounded client, streams on the streaming one, JSON as the SDK speaks it.
func (a *Adapter) processes(id string, streaming bool) processpbconnect.ProcessClient {
	client := a.client
	if streaming {
		client = a.streaming
	}
	return processpbconnect.NewProcessClient(client, a.envdBase(id), connect.WithProtoJSON(),
		connect.WithReadMaxBytes(MaxEnvdMessage), connect.WithInterceptors(envdHeaders{sandbox: id, user: a.cfg.User}))
}

// MaxEnvdMessage bounds one message read from envd: its output chunks are
// at most 32 KiB, and a larger message is refused as the provider's error
// rather than held in memory.
const MaxEnvdMessage = 4 << 20

// pidOf selects a process by pid, never by tag (envd's tag lookup can miss
// a live process).
func pidOf(pid uint32) *processpb.ProcessSelector {
	return &processpb.ProcessSelector{Selector: &processpb.ProcessSelector_Pid{Pid: pid}}
}

// envdError maps an envd (or proxy) failure to the taxonomy. A context
// error stays what it is.
func envdError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return err // the caller's own cancellation, recognisable as such
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return httpx.Transport(err)
	}
	msg := connectMessage(err)
	if malformed(err) {
		return &paddock.ProviderError{Provider: paddock.ProviderE2B, Detail: msg}
	}
	switch connect.CodeOf(err) {
	case connect.CodeNotFound:
		return paddock.ErrNotFound
	case connect.CodeUnauthenticated, connect.CodePermissionDenied:
		return &paddock.DeniedError{Detail: msg}
	case connect.CodeInvalidArgument, connect.CodeFailedPrecondition, connect.CodeOutOfRange, connect.CodeUnimplemented, connect.CodeAlreadyExists:
		return &paddock.InvalidError{Detail: msg}
	case connect.CodeResourceExhausted:
		return &paddock.RateLimitedError{}
	case connect.CodeDeadlineExceeded:
		return &paddock.UnavailableError{Detail: paddock.DetailTimeout}
	}
	return &paddock.UnavailableError{Detail: msg}
}

// malformed reports an answer envd should never send, found while
// decoding it here: a message that does not decode, an envelope with flags
// the protocol lacks, or a message above MaxEnvdMessage. (A body cut short
// is a transport failure instead.)
func malformed(err error) bool {
	var ce *connect.Error
	if !errors.As(err, &ce) || errors.Is(err, io.ErrUnexpectedEOF) {
		return false
	}
	m := ce.Message()
	switch ce.Code() {
	case connect.CodeInvalidArgument:
		return strings.HasPrefix(m, "unmarshal ")
	case connect.CodeInternal:
		return strings.HasPrefix(m, "protocol error: invalid envelope") || strings.HasPrefix(m, "unmarshal ") ||
			strings.HasPrefix(m, "corrupt response")
	case connect.CodeResourceExhausted:
		return strings.Contains(m, "larger than configured max")
	}
	return false
}

// connectMessage is the short text of a connect error (never headers).
func connectMessage(err error) string {
	var ce *connect.Error
	if errors.As(err, &ce) {
		m := ce.Message()
		if len(m) > 200 {
			m = m[:200] + "..."
		}
		return "envd: " + ce.Code().String() + ": " + m
	}
	return "envd: " + err.Error()
}
