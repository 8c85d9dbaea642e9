// Package stubserver is what the loopback provider servers (spritestest,
// e2btest, daytonatest) are built on, so each writes only its provider's
// behaviour: the server's start and shutdown, a directory for its
// sandboxes' files, the log of requests and the counts in flight, faults
// that replace one answer of a route (queued per route, used once, in
// order), and the goroutines Close waits for.
package stubserver

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
)

// Style is how a provider answers a fault that sets no body of its own.
type Style struct {
	// DefaultBody is the body of a fault answering status to r.
	DefaultBody func(r *http.Request, status int) string
	// ContentType labels a fault's body.
	ContentType func(body string) string
}

// Base is a loopback server's scaffolding; embed it, and Start it once.
// Its methods are safe for concurrent use.
type Base struct {
	ts       *httptest.Server
	root     string
	style    Style
	shutdown func()
	log      Log
	faults   Queue
	closing  chan struct{}

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// Start makes the server's directory (a fresh temporary one, named for
// name), builds its routes with routes (which may read Root), and serves
// them on 127.0.0.1 until t ends. shutdown stops what the server runs (its
// sandboxes' processes) when it closes, before Close waits for the
// server's goroutines and once more after, so it must be idempotent.
func (b *Base) Start(t testing.TB, name string, style Style, routes func() http.Handler, shutdown func()) {
	t.Helper()
	dir, err := os.MkdirTemp("", name+"-")
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b.root, b.style, b.shutdown, b.closing = dir, style, shutdown, make(chan struct{})
	// Started after b.ts is set: handlers read b.ts (its URL), and the
	// start orders that write before every request.
	b.ts = httptest.NewUnstartedServer(routes())
	b.ts.Start()
	t.Cleanup(b.Close)
}

// URL is the server's base URL.
func (b *Base) URL() string { return b.ts.URL }

// Root is the directory the server keeps its sandboxes' files under.
func (b *Base) Root() string { return b.root }

// Closing is closed once Close begins: long requests end on it.
func (b *Base) Closing() <-chan struct{} { return b.closing }

// Track counts a piece of the server's work that Close waits for; false
// (and nothing to call) once the server is closing.
func (b *Base) Track() (done func(), ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, false
	}
	b.wg.Add(1)
	return b.wg.Done, true
}

// Go runs f on a goroutine Close waits for, unless the server is closing.
func (b *Base) Go(f func()) {
	done, ok := b.Track()
	if !ok {
		return
	}
	go func() {
		defer done()
		f()
	}()
}

// Close stops the server: long requests end, the shutdown stops what it
// runs, connections are cut, and its goroutines and directory are gone
// when it returns. It is idempotent.
func (b *Base) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	close(b.closing)
	b.mu.Unlock()
	if b.shutdown != nil {
		b.shutdown()
	}
	b.ts.CloseClientConnections()
	b.ts.Close()
	b.wg.Wait()
	if b.shutdown != nil {
		b.shutdown() // again, for what the last of the work started meanwhile
	}
	_ = os.RemoveAll(b.root)
}

// Requests returns every request received so far, in order.
func (b *Base) Requests() []Request { return b.log.All() }

// Count returns how many requests matched route.
func (b *Base) Count(route string) int { return b.log.Count(route) }

// MostInFlight is the most requests of route the server answered at once
// (a stalled one counts until it is answered).
func (b *Base) MostInFlight(route string) int { return b.log.MostInFlight(route) }

// InFlight is how many requests of route the server is answering now.
func (b *Base) InFlight(route string) int { return b.log.InFlight(route) }

// Fail queues f for the next request of route; each fault is used once,
// in order.
func (b *Base) Fail(route string, f Fault) { b.faults.Add(route, f) }

// Record logs a request that a route of the server's own answers, and
// answers its index.
func (b *Base) Record(route string, r *http.Request, body []byte) int {
	return b.log.Record(route, r, body)
}

// Fault answers r with route's next queued fault, if there is one, in the
// server's style (request i of the log, if i is not negative, is marked
// when its client leaves during a stall); it reports whether the route
// must not run.
func (b *Base) Fault(route string, i int, w http.ResponseWriter, r *http.Request) bool {
	f, ok := b.faults.Take(route)
	if !ok {
		return false
	}
	return f.Apply(Server{
		DefaultBody: func(status int) string { return b.style.DefaultBody(r, status) },
		ContentType: b.style.ContentType,
		ClientGone: func() {
			if i >= 0 {
				b.log.Gone(i)
			}
		},
	}, w, r)
}

// Guard is a route's gate before its behaviour: it answers a refusal
// itself (a wrong credential) and reports whether the route goes on.
type Guard func(w http.ResponseWriter, r *http.Request) bool

// Route is h as a route of the server: it reads the body (at most 1 MiB;
// none when body is false, for a route that streams it), records the
// request, counts it in flight while it is answered, passes it through
// guard, then answers a queued fault instead of the route's behaviour.
func (b *Base) Route(route string, body bool, guard Guard, h Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var data []byte
		if body {
			data, _ = io.ReadAll(io.LimitReader(r.Body, 1<<20))
		}
		i := b.log.Record(route, r, data)
		defer b.log.Begin(route)()
		if guard != nil && !guard(w, r) {
			return
		}
		if b.Fault(route, i, w, r) {
			return
		}
		h(w, r, data)
	}
}

// Handler is a route's behaviour, given the request's body as Route read
// it.
type Handler func(w http.ResponseWriter, r *http.Request, body []byte)

// Routes maps route names, which are ServeMux patterns, to behaviours.
type Routes map[string]Handler

// Mux serves routes, each through Route behind guard; the routes named in
// streamed get their body unread, to stream it.
func (b *Base) Mux(guard Guard, routes Routes, streamed ...string) *http.ServeMux {
	mux := http.NewServeMux()
	for pattern, h := range routes {
		mux.HandleFunc(pattern, b.Route(pattern, !slices.Contains(streamed, pattern), guard, h))
	}
	return mux
}

// Each runs f on each value of m, read under mu; f runs with mu unlocked
// (to stop what a sandbox runs as the server closes).
func Each[K comparable, V any](mu *sync.Mutex, m map[K]V, f func(V)) {
	mu.Lock()
	all := make([]V, 0, len(m))
	for _, v := range m {
		all = append(all, v)
	}
	mu.Unlock()
	for _, v := range all {
		f(v)
	}
}

// RandomHex is n random hex digits (keys, ids).
func RandomHex(n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}
