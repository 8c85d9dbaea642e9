package stubserver

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fault replaces the next answer of a route.
type Fault struct {
	// Status answers with this status instead of the route's behaviour
	// (0 = the route behaves normally, after Delay).
	Status int
	// Body is the raw answer body (default: the server's error body holding
	// private provider detail, which must never reach an adapter's errors).
	Body string
	// Empty sends no body at all (instead of the default).
	Empty bool
	// Pieces, when set, is the body written piece by piece, each flushed
	// on its own (a body split across writes).
	Pieces []string
	// Header is added to the answer (a Location, rate-limit headers...).
	Header http.Header
	// Delay stalls before answering, or until the client gives up.
	Delay time.Duration
	// Hold, when set, stalls before answering until it is closed (or the
	// client gives up): a test decides when, not a timer.
	Hold <-chan struct{}
	// Reset drops the connection with a TCP reset and no answer.
	Reset bool
	// DeclaredLength sets Content-Length above the body's size; the server
	// then ends the connection after the body (a truncated answer), or with
	// Stall keeps it open until the client leaves.
	DeclaredLength int
	Stall          bool
}

// PrivateDetail is the text of the default fault bodies.
const PrivateDetail = "private provider detail"

// Server is how a fault answers on its server's behalf.
type Server struct {
	// DefaultBody is the body of a fault that sets none, for its status.
	DefaultBody func(status int) string
	// ContentType is the content type of a body.
	ContentType func(body string) string
	// ClientGone is told when the client left during a delay or stall.
	ClientGone func()
}

// Apply answers r with the fault; it reports whether the route must not
// run (false: only a delay was asked).
func (f Fault) Apply(srv Server, w http.ResponseWriter, r *http.Request) bool {
	if f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			srv.ClientGone()
			return true
		}
	}
	if f.Hold != nil {
		select {
		case <-f.Hold:
		case <-r.Context().Done():
			srv.ClientGone()
			return true
		}
	}
	if f.Reset {
		ResetConn(w)
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
	if body == "" && f.DeclaredLength == 0 && !f.Empty && len(f.Pieces) == 0 {
		body = srv.DefaultBody(f.Status)
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", srv.ContentType(body))
	}
	if f.DeclaredLength > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(f.DeclaredLength))
	}
	w.WriteHeader(f.Status)
	for _, piece := range f.Pieces {
		_, _ = w.Write([]byte(piece))
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
	_, _ = w.Write([]byte(body))
	if f.DeclaredLength > 0 {
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		if f.Stall {
			select {
			case <-r.Context().Done():
				srv.ClientGone()
			case <-time.After(2 * time.Minute):
			}
		}
		ResetConn(w)
	}
	return true
}

// Queue holds faults per route.
type Queue struct {
	mu     sync.Mutex
	faults map[string][]Fault
}

// Add queues f for the next request of route.
func (q *Queue) Add(route string, f Fault) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.faults == nil {
		q.faults = map[string][]Fault{}
	}
	q.faults[route] = append(q.faults[route], f)
}

// Take hands out route's next fault, once.
func (q *Queue) Take(route string) (Fault, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	list := q.faults[route]
	if len(list) == 0 {
		return Fault{}, false
	}
	q.faults[route] = list[1:]
	return list[0], true
}

// ResetConn drops a hijacked connection with a TCP reset.
func ResetConn(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// JSONOrText labels a fault body: jsonType when it looks like JSON (an
// object or an array), else plain text.
func JSONOrText(jsonType string) func(body string) string {
	return func(body string) string {
		if t := strings.TrimSpace(body); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			return jsonType
		}
		return "text/plain; charset=utf-8"
	}
}

// Answer answers r with route's next queued fault, if there is one, on
// srv's behalf; it reports whether the route must not run.
func (q *Queue) Answer(route string, srv Server, w http.ResponseWriter, r *http.Request) bool {
	f, ok := q.Take(route)
	if !ok {
		return false
	}
	return f.Apply(srv, w, r)
}
