package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
)

// Client is one provider of a runtime as a paddock.Adapter. Calls that
// create or list go to the client's provider; calls on a handle go to the
// handle's (docs/contract.md#registry): the tag the caller passes selects
// the runtime's adapter, and handles come back as that adapter tagged them.
// Every method is safe for concurrent use.
type Client struct {
	t Transport
	p paddock.Provider
}

// The client offers every optional interface; the runtime answers
// ErrNotSupported (ErrNoPublicURL for PublicURL) where the adapter behind
// it has none.
var _ interface {
	paddock.Adapter
	paddock.CreateNewer
	paddock.DestroyOncer
	paddock.CheckpointOncer
	paddock.PolicyApplier
	paddock.PublicURLer
	paddock.Checkpointer
	paddock.SessionTerminator
	paddock.Exposer
	paddock.FileManager
	paddock.DirWatcher
	paddock.HostPather
} = (*Client)(nil)

// New returns provider p of the runtime t reaches.
func New(t Transport, p paddock.Provider) *Client { return &Client{t: t, p: p} }

// Provider is the provider the client drives; its handles carry it.
func (c *Client) Provider() paddock.Provider { return c.p }

// Capabilities are the adapter's, as the transport reports them on every
// call.
func (c *Client) Capabilities() paddock.CapabilitySet { return c.t.Capabilities(c.p) }

// BuildHandle returns {Provider(), name}, with no I/O.
func (c *Client) BuildHandle(name string) paddock.Handle {
	return paddock.Handle{Provider: c.p, Name: name}
}

// HostPath maps an in-sandbox path as the adapter sees it where the
// transport shares this machine's paths; elsewhere it is unchanged.
func (c *Client) HostPath(h paddock.Handle, path string) string {
	if hp, ok := c.t.(HostPather); ok {
		return hp.HostPath(h, path)
	}
	return path
}

// Send sends q, a request about the sandbox h names (its provider, and
// its name or "" for none), over t and answers its reply as R, or the
// error wrapped once with the operation: what every operation of a Client
// does, for the requests a runtime's own callers send directly (a spawn
// owned by an actor, say).
func Send[R Reply](ctx context.Context, t Transport, h paddock.Handle, q Request) (R, error) {
	return call[R](ctx, New(t, h.Provider), h, q)
}

// call sends q, a request about the sandbox h names, and answers its
// reply, or the error wrapped with the operation.
func call[R Reply](ctx context.Context, c *Client, h paddock.Handle, q Request) (R, error) {
	return callHeld[R](ctx, c, h, q, 0)
}

// callHeld is call for an operation the runtime may take hold to perform.
func callHeld[R Reply](ctx context.Context, c *Client, h paddock.Handle, q Request, hold time.Duration) (R, error) {
	r, err := c.t.Call(ctx, q, hold)
	return decode[R](h, q, r, err)
}

// decode answers reply r of q, a request about h, as R: the transport's
// error, a reply of another type, or the failure it carries, each wrapped
// with the operation.
func decode[R Reply](h paddock.Handle, q proto.Message, r Reply, err error) (R, error) {
	var zero R
	if err != nil {
		return zero, wrap(h, q, err)
	}
	got, ok := r.(R)
	if !ok {
		return zero, wrap(h, q, &paddock.UnavailableError{Detail: fmt.Sprintf("a %T answered a %T", r, q)})
	}
	if err := wire.ErrorOf(got.GetFailure()); err != nil {
		return got, wrap(h, q, err)
	}
	return got, nil
}

// wrap wraps err once with q's operation and the provider and name of h;
// an error the runtime already wrapped keeps its wrapping.
func wrap(h paddock.Handle, q proto.Message, err error) error {
	var op *paddock.OpError
	if errors.As(err, &op) {
		return err
	}
	return &paddock.OpError{Op: messages.Operation(q), Provider: h.Provider, Name: h.Name, Err: err}
}
