package e2btest

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/adapters/internal/stubfault"
)

// Fault replaces the next answer of a route. Fail queues faults per route;
// each is used once, in order.
type Fault = stubfault.Fault

// PrivateDetail is the message of the default fault body.
const PrivateDetail = stubfault.PrivateDetail

// Fail queues f for the next request matching route, e.g. "POST /sandboxes"
// or "DELETE /sandboxes/{id}".
func (s *Server) Fail(route string, f Fault) { s.faults.Add(route, f) }

// applyFault answers r with the route's next fault, if one is queued; it
// reports whether the route must not run.
func (s *Server) applyFault(route string, w http.ResponseWriter, r *http.Request) bool {
	f, ok := s.faults.Take(route)
	if !ok {
		return false
	}
	return f.Apply(stubfault.Server{
		DefaultBody: func(status int) string {
			return `{"code":` + strconv.Itoa(status) + `,"message":"` + PrivateDetail + `"}`
		},
		ContentType: func(body string) string {
			if strings.HasPrefix(strings.TrimSpace(body), "{") || strings.HasPrefix(strings.TrimSpace(body), "[") {
				return "application/json"
			}
			return "text/plain; charset=utf-8"
		},
		ClientGone: func() {},
	}, w, r)
}

// Status returns a fault answering status with E2B's error body holding
// private detail.
func Status(status int) Fault { return Fault{Status: status} }

// Body returns a fault answering status with exactly body ("" is an empty
// body).
func Body(status int, body string) Fault { return Fault{Status: status, Body: body, Empty: body == ""} }

// RateLimited returns E2B's middleware 429: its body, and the hint in the
// Retry-After header (E2B puts none in the body).
func RateLimited(retryAfterSeconds int) Fault {
	return Fault{Status: http.StatusTooManyRequests, Body: `{"code":429,"message":"Rate limit exceeded"}`,
		Header: http.Header{"Retry-After": {strconv.Itoa(retryAfterSeconds)}}}
}

// ConcurrencyLimited returns the 429 of a create at the team's sandbox
// limit: no Retry-After.
func ConcurrencyLimited() Fault {
	return Fault{Status: http.StatusTooManyRequests,
		Body: `{"code":429,"message":"you have reached the maximum number of concurrent E2B sandboxes (20)"}`}
}

// Reset returns a fault that drops the connection with no answer.
func Reset() Fault { return Fault{Reset: true} }
