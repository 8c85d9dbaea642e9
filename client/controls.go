package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
)

// Controls are what a stream of a Client offers besides its events: a
// live subscription's stdin, signals and resizes, and its local detach,
// each one request over the transport. Embed it in a transport's stream.
type Controls struct {
	T Transport
	// Ref is the subscription the requests go to now; a stream that is
	// re-attaching waits for its next one, and one that ended answers
	// ErrCommandExited.
	Ref func(ctx context.Context) (*messages.CommandRef, error)
}

// WriteStdin writes p to the command's stdin, in order with the other
// requests; p is the caller's again once it returns.
func (k Controls) WriteStdin(ctx context.Context, p []byte) error {
	data := bytes.Clone(p) // the transport may still hold the request after a timeout
	return k.send(ctx, func(c *messages.CommandRef) Request { return &messages.WriteStdinRequest{Command: c, Data: data} })
}

// CloseStdin sends the end of the command's input.
func (k Controls) CloseStdin(ctx context.Context) error {
	return k.send(ctx, func(c *messages.CommandRef) Request { return &messages.CloseStdinRequest{Command: c} })
}

// Signal delivers sig to the live command.
func (k Controls) Signal(ctx context.Context, sig paddock.Signal) error {
	return k.send(ctx, func(c *messages.CommandRef) Request { return &messages.SignalRequest{Command: c, Signal: string(sig)} })
}

// Resize sets the live terminal's size.
func (k Controls) Resize(ctx context.Context, size paddock.TermSize) error {
	return k.send(ctx, func(c *messages.CommandRef) Request {
		return &messages.ResizeRequest{Command: c, Size: wire.TermSizeMessage(&size)}
	})
}

// Stop detaches the subscription on the runtime's side (StopCommand),
// which succeeds for any command, repeatedly.
func (k Controls) Stop(ctx context.Context) error {
	ref, err := k.Ref(ctx)
	if err != nil {
		return err
	}
	r, err := k.T.Call(ctx, &messages.StopCommandRequest{Command: ref}, 0)
	if err == nil {
		err = wire.ErrorOf(r.GetFailure())
	}
	return err
}

// send sends one request for the current subscription. Any failure but
// command_exited, write_failed, invalid, not_supported and an unknown
// provider is write_failed (docs/contract.md#op-stdin), and errors.Is still
// finds a context's end.
func (k Controls) send(ctx context.Context, build func(*messages.CommandRef) Request) error {
	ref, err := k.Ref(ctx)
	if err != nil {
		return err
	}
	q := build(ref)
	r, err := k.T.Call(ctx, q, 0)
	if err == nil {
		err = wire.ErrorOf(r.GetFailure())
	}
	var unknown *paddock.UnknownProviderError
	switch {
	case err == nil || errors.Is(err, paddock.ErrCommandExited) || errors.Is(err, paddock.ErrWriteFailed) ||
		errors.Is(err, paddock.ErrInvalid) || errors.Is(err, paddock.ErrNotSupported) || errors.As(err, &unknown):
	case ctx.Err() != nil:
		err = fmt.Errorf("%w: %w", &paddock.WriteFailedError{Detail: "no reply: " + ctx.Err().Error()}, ctx.Err())
	default:
		err = &paddock.WriteFailedError{Detail: err.Error()}
	}
	if err == nil {
		return nil
	}
	var op *paddock.OpError
	if errors.As(err, &op) {
		return err
	}
	return &paddock.OpError{Op: messages.Operation(q), Provider: paddock.Provider(ref.GetProvider()), Err: err}
}
