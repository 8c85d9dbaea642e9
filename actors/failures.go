package actors

import (
	"io"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/supervisor"
	"google.golang.org/protobuf/proto"
)

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
