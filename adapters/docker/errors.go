package docker

import (
	"context"
	"errors"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/paddockhq/paddock"
)

// maxDetail bounds the engine text an error carries.
const maxDetail = 300

// engineError maps an engine answer to the taxonomy: absence is
// not_found, a refused request invalid, a conflict (the container is
// stopped or paused) unavailable, anything else (the engine unreachable,
// a timeout, an internal error) unavailable. nil stays nil.
func engineError(op string, err error) error {
	if err == nil {
		return nil
	}
	detail := "docker " + op + ": " + short(err.Error())
	switch {
	case cerrdefs.IsNotFound(err):
		return paddock.ErrNotFound
	case cerrdefs.IsInvalidArgument(err):
		return &paddock.InvalidError{Detail: detail}
	case cerrdefs.IsUnauthorized(err) || cerrdefs.IsPermissionDenied(err):
		return &paddock.DeniedError{Detail: detail}
	case errors.Is(err, context.DeadlineExceeded):
		return &paddock.UnavailableError{Detail: paddock.DetailTimeout}
	}
	return &paddock.UnavailableError{Detail: detail}
}

// short keeps an engine message to one bounded line.
func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxDetail {
		s = s[:maxDetail] + "..."
	}
	return s
}
