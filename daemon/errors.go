package daemon

import (
	"errors"
	"strings"

	"connectrpc.com/connect"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/messages"
)

// codes are the Connect codes of the taxonomy's kinds: a client of any
// language tells not_found from unavailable by the code, and reads the
// kind and detail from the Failure the error carries (docs/daemon.md).
var codes = map[messages.ErrorKind]connect.Code{
	messages.ErrorKind_ERROR_KIND_NOT_FOUND:        connect.CodeNotFound,
	messages.ErrorKind_ERROR_KIND_TRUNCATED:        connect.CodeDataLoss,
	messages.ErrorKind_ERROR_KIND_NOT_SUPPORTED:    connect.CodeUnimplemented,
	messages.ErrorKind_ERROR_KIND_ALREADY_EXISTS:   connect.CodeAlreadyExists,
	messages.ErrorKind_ERROR_KIND_COMMAND_EXITED:   connect.CodeFailedPrecondition,
	messages.ErrorKind_ERROR_KIND_RATE_LIMITED:     connect.CodeResourceExhausted,
	messages.ErrorKind_ERROR_KIND_UNAVAILABLE:      connect.CodeUnavailable,
	messages.ErrorKind_ERROR_KIND_DENIED:           connect.CodePermissionDenied,
	messages.ErrorKind_ERROR_KIND_INVALID:          connect.CodeInvalidArgument,
	messages.ErrorKind_ERROR_KIND_RESTORE_FAILED:   connect.CodeAborted,
	messages.ErrorKind_ERROR_KIND_WRITE_FAILED:     connect.CodeAborted,
	messages.ErrorKind_ERROR_KIND_PROVIDER:         connect.CodeInternal,
	messages.ErrorKind_ERROR_KIND_NO_PUBLIC_URL:    connect.CodeNotFound,
	messages.ErrorKind_ERROR_KIND_UNKNOWN_PROVIDER: connect.CodeNotFound,
	messages.ErrorKind_ERROR_KIND_OTHER:            connect.CodeUnknown,
}

// replyError is the Connect error of a reply that carries a failure (nil
// for one that does not): the code of its kind, its detail as the message,
// and as details the Failure and the whole reply (for what a reply carries
// beside its failure, an exec's output so far).
func replyError(r client.Reply) error {
	f := r.GetFailure()
	if f == nil {
		return nil
	}
	code, ok := codes[f.GetKind()]
	if !ok {
		code = connect.CodeUnknown
	}
	msg := strings.TrimPrefix(strings.ToLower(f.GetKind().String()), "error_kind_")
	if f.GetDetail() != "" {
		msg += ": " + f.GetDetail()
	}
	e := connect.NewError(code, errors.New(msg))
	if d, err := connect.NewErrorDetail(f); err == nil {
		e.AddDetail(d)
	}
	if d, err := connect.NewErrorDetail(r); err == nil {
		e.AddDetail(d)
	}
	return e
}

// replyOf is the reply a Connect error of replyError carries, if err is
// one.
func replyOf(err error) (client.Reply, bool) {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return nil, false
	}
	for _, d := range ce.Details() {
		v, err := d.Value()
		if r, ok := v.(client.Reply); err == nil && ok && r.GetFailure() != nil {
			return r, true
		}
	}
	return nil, false
}
