package spritestest

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Fault replaces the next answer of a route. Fail queues faults per route;
// each is used once, in order.
type Fault struct {
	// Status answers with this status instead of the route's behaviour
	// (0 = the route behaves normally, after Delay).
	Status int
	// Body is the raw answer body (default: a JSON error holding private
	// provider detail, which must never reach an adapter's errors).
	Body string
	// Empty sends no body at all (instead of the default).
	Empty bool
	// Header is added to the answer (a Location, rate-limit headers...).
	Header http.Header
	// Delay stalls before answering, or until the client gives up (which
	// the request log then shows as ClientGone).
	Delay time.Duration
	// Reset drops the connection with a TCP reset and no answer.
	Reset bool
	// DeclaredLength sets Content-Length above the body's size; the server
	// then ends the connection after the body (a truncated answer), or with
	// Stall keeps it open until the client leaves.
	DeclaredLength int
	Stall          bool
}

// PrivateDetail is the text of the default fault body.
const PrivateDetail = "private provider detail"

// Fail queues f for the next request matching route, e.g. "POST /v1/sprites"
// or "DELETE /v1/sprites/{name}". Exec upgrades are "WS /v1/sprites/{name}/exec".
func (s *Server) Fail(route string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[route] = append(s.faults[route], f)
}

func (s *Server) takeFault(route string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.faults[route]
	if len(q) == 0 {
		return Fault{}, false
	}
	s.faults[route] = q[1:]
	return q[0], true
}

// apply answers r with the fault; it reports whether the route must not
// run (false: only a delay was asked).
func (f Fault) apply(s *Server, i int, w http.ResponseWriter, r *http.Request) bool {
	if f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			s.clientGone(i)
			return true
		}
	}
	if f.Reset {
		resetConn(w)
		return true
	}
	if f.Status == 0 {
		return false
	}
	for k, vs := range f.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	body := f.Body
	if body == "" && f.DeclaredLength == 0 && !f.Empty {
		body = `{"error":"` + PrivateDetail + `"}`
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", contentType(body))
	}
	if f.DeclaredLength > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(f.DeclaredLength))
	}
	w.WriteHeader(f.Status)
	_, _ = w.Write([]byte(body))
	if f.DeclaredLength > 0 {
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		if f.Stall {
			select {
			case <-r.Context().Done():
				s.clientGone(i)
			case <-time.After(2 * time.Minute):
			}
		}
		resetConn(w)
	}
	return true
}

func contentType(body string) string {
	if strings.Contains(body, "\n{") || strings.HasPrefix(body, `{"type"`) {
		return "application/x-ndjson"
	}
	return "application/json; charset=utf-8"
}

// Status returns a fault answering status with the default private body.
func Status(status int) Fault { return Fault{Status: status} }

// Body returns a fault answering status with exactly body ("" is an empty
// body).
func Body(status int, body string) Fault { return Fault{Status: status, Body: body, Empty: body == ""} }

// Redirect returns a 302 to elsewhere (which must not be followed).
func Redirect() Fault {
	return Fault{Status: http.StatusFound, Header: http.Header{"Location": {"https://elsewhere.invalid/"}}}
}

// RateLimited returns a 429 with the retry hint in the body and the
// headers, as Sprites sends it.
func RateLimited(retryAfterSeconds int) Fault {
	n := strconv.Itoa(retryAfterSeconds)
	return Fault{
		Status: http.StatusTooManyRequests,
		Body: `{"error":"sprite_creation_rate_limited","message":"too many sprites created","limit":10,` +
			`"window_seconds":60,"retry_after_seconds":` + n + `,"current_count":10}`,
		Header: http.Header{"Retry-After": {n}, "X-RateLimit-Limit": {"10"}, "X-RateLimit-Remaining": {"0"},
			"X-RateLimit-Reset": {strconv.FormatInt(time.Now().Add(time.Duration(retryAfterSeconds)*time.Second).Unix(), 10)}},
	}
}

// Stall returns a fault that answers nothing until the client gives up.
func Stall() Fault { return Fault{Delay: 10 * time.Minute} }
