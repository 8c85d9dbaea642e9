package e2b_test

import (
	"context"
	"net/http"
	"testing"

	"connectrpc.com/connect"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/paddockhq/paddock/adapters/e2b/envd/processpb"
	"github.com/paddockhq/paddock/adapters/e2b/envd/processpb/processpbconnect"
	"github.com/paddockhq/paddock/adapters/internal/streambench"
)

// benchBytes is what each side reads per iteration.
const benchBytes = 32 << 20

// BenchmarkStdout reads 32 MiB of a command's stdout three ways in each
// iteration, in turn: straight from e2btest's process stream with a bare
// Connect client (the baseline), through the adapter's Stream, and
// through the runtime's FrameStream; it reports each side's MB/s and the
// ratios to the baseline.
func BenchmarkStdout(b *testing.B) {
	srv := e2btest.NewServer(b)
	a := newAdapter(b, srv)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderE2B: a}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close() })
	h, err := a.Create(ctx, "bench", paddock.CreateOpts{})
	if err != nil {
		b.Fatal(err)
	}
	cmd := paddock.NewCmd("head", "-c", "33554432", "/dev/zero")
	raw := rawProcesses(srv, srv.Sandboxes()[0])

	streambench.Compare(b, func(int) { streambench.Expect(b, rawStdout(b, raw, cmd), benchBytes) }, a, rt.Adapter(h.Provider), h, cmd, benchBytes)
}

// rawProcesses is a bare Connect client of sandbox id's Process service,
// routed as E2B's proxy routes it.
func rawProcesses(srv *e2btest.Server, id string) processpbconnect.ProcessClient {
	return processpbconnect.NewProcessClient(http.DefaultClient, srv.URL(), connect.WithProtoJSON(),
		connect.WithInterceptors(routing{id}))
}

// rawStdout starts cmd and counts its stdout bytes until its end event.
func rawStdout(b *testing.B, c processpbconnect.ProcessClient, cmd paddock.Cmd) int {
	st, err := c.Start(ctx, connect.NewRequest(&processpb.StartRequest{Process: &processpb.ProcessConfig{Cmd: cmd.Path, Args: cmd.Args}}))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	n := 0
	for st.Receive() {
		ev := st.Msg().GetEvent()
		n += len(ev.GetData().GetStdout())
		if ev.GetEnd() != nil {
			return n
		}
	}
	b.Fatalf("the stream ended without an end event: %v", st.Err())
	return 0
}

// routing sets the headers that send a request to one sandbox's envd.
type routing struct{ id string }

func (r routing) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc { return next }

func (r routing) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(c context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(c, spec)
		conn.RequestHeader().Set("E2b-Sandbox-Id", r.id)
		conn.RequestHeader().Set("E2b-Sandbox-Port", "49983")
		conn.RequestHeader().Set("Authorization", "Basic dXNlcjo=") // user:
		return conn
	}
}

func (r routing) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
