// Package spritestest is a loopback Sprites API for tests: REST, exec and
// attach over WebSocket with real processes (or the scripted drop command)
// behind them, sessions that outlive a disconnect and replay on attach,
// kill, checkpoints, network policy, URL settings and files. It follows the
// provider's protocol as Sprites documents and serves it, not any adapter,
// and can inject the failures that protocol allows, per route and call.
//
//	srv := spritestest.NewServer(t)
//	srv.Fail("POST /v1/sprites", spritestest.RateLimited(2))
//	a := sprites.New(sprites.Config{Token: paddock.NewSecret(srv.Token()), BaseURL: srv.URL()})
package spritestest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubserver"
)

// SpriteVersion is the Sprite-Version header the server sends.
const SpriteVersion = "v0.0.1-rc46"

// Request is one request the server received.
type Request struct {
	Route      string // e.g. "POST /v1/sprites/{name}/exec/{session}/kill"
	Method     string
	Path       string // decoded
	RawPath    string // as sent, percent-encoded
	Query      string
	Body       string
	ClientGone bool // the client closed the connection while the server stalled
}

// Server is a loopback Sprites API. Use NewServer.
type Server struct {
	t        testing.TB
	ts       *httptest.Server
	token    string
	exitHold time.Duration
	warm     time.Duration
	cold     time.Duration
	root     string

	mu       sync.Mutex
	sprites  map[string]*sprite
	requests []Request
	faults   stubserver.Queue
	scripts  []Script
	nextPID  int
	closed   bool
	done     chan struct{}  // closed by Close
	wg       sync.WaitGroup // socket handlers and session goroutines

	coldStart    int    // exec upgrades each new sprite refuses with 503
	capabilities string // X-Sprite-Capabilities of exec upgrades
}

// Option configures NewServer.
type Option func(*Server)

// WithToken sets the accepted bearer token (default: random).
func WithToken(token string) Option { return func(s *Server) { s.token = token } }

// WithExitHold sets how long an exec socket stays open after the exit
// frame before the server closes it (default 5s, as in production).
func WithExitHold(d time.Duration) Option { return func(s *Server) { s.exitHold = d } }

// WithIdle sets the idle times after which a running sprite reports warm,
// then cold (defaults 30s and 5m).
func WithIdle(warm, cold time.Duration) Option {
	return func(s *Server) { s.warm, s.cold = warm, cold }
}

// WithColdStart makes each new (or just restored) sprite refuse its first
// n exec upgrades with 503, as a freshly started sprite does for a few
// seconds.
func WithColdStart(n int) Option { return func(s *Server) { s.coldStart = n } }

// WithCapabilities sets the X-Sprite-Capabilities header of exec upgrades
// (default "signal").
func WithCapabilities(c string) Option { return func(s *Server) { s.capabilities = c } }

// NewServer starts a server on 127.0.0.1, closed when the test ends.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{t: t, exitHold: 5 * time.Second, warm: 30 * time.Second, cold: 5 * time.Minute,
		sprites: map[string]*sprite{}, nextPID: 19,
		done: make(chan struct{}), capabilities: "signal"}
	s.token = randomHex(16)
	for _, o := range opts {
		o(s)
	}
	dir, err := os.MkdirTemp("", "spritestest-")
	if err != nil {
		t.Fatalf("spritestest: %v", err)
	}
	s.root = dir
	// Started after s.ts is set: handlers read s.ts (its URL), and the
	// start orders that write before every request.
	s.ts = httptest.NewUnstartedServer(s.routes())
	s.ts.Start()
	t.Cleanup(s.Close)
	return s
}

// URL is the server's base URL.
func (s *Server) URL() string { return s.ts.URL }

// Token is the bearer token the server accepts.
func (s *Server) Token() string { return s.token }

// Close stops every session and the server.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	var all []*session
	for _, sp := range s.sprites {
		for _, ss := range sp.sessions {
			all = append(all, ss)
		}
	}
	s.mu.Unlock()
	for _, ss := range all {
		ss.shutdown()
	}
	s.ts.CloseClientConnections()
	s.ts.Close()
	s.wg.Wait()
	_ = os.RemoveAll(s.root)
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count returns how many requests matched route.
func (s *Server) Count(route string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Route == route {
			n++
		}
	}
	return n
}

// record logs a request and returns its index.
func (s *Server) record(route string, r *http.Request, body []byte) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Route: route, Method: r.Method, Path: r.URL.Path, RawPath: r.URL.EscapedPath(), Query: r.URL.RawQuery, Body: string(body)})
	return len(s.requests) - 1
}

func (s *Server) clientGone(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[i].ClientGone = true
}

// authorised checks the bearer token.
func (s *Server) authorised(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Authorization") != "Bearer "+s.token {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "authentication failed"})
		return false
	}
	return true
}

// routes maps every route of the API. The route names (the patterns, with
// "WS" for upgrades) are what Fail and Count take.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, h func(http.ResponseWriter, *http.Request, []byte)) {
		mux.HandleFunc(pattern, s.serve(pattern, h))
	}
	handle("POST /v1/sprites", s.createSprite)
	handle("GET /v1/sprites", s.listSprites)
	handle("GET /v1/sprites/{name}", s.getSprite)
	handle("PUT /v1/sprites/{name}", s.updateSprite)
	handle("DELETE /v1/sprites/{name}", s.deleteSprite)
	mux.HandleFunc("GET /v1/sprites/{name}/exec", s.execRoute)
	handle("HEAD /v1/sprites/{name}/exec", func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /v1/sprites/{name}/exec/{session}", s.sessionRoute)
	handle("POST /v1/sprites/{name}/exec/{session}/kill", s.killSession)
	handle("POST /v1/sprites/{name}/checkpoint", s.createCheckpoint)
	handle("GET /v1/sprites/{name}/checkpoints", s.listCheckpoints)
	handle("GET /v1/sprites/{name}/checkpoints/{id}", s.getCheckpoint)
	handle("POST /v1/sprites/{name}/checkpoints/{id}/restore", s.restoreCheckpoint)
	handle("GET /v1/sprites/{name}/policy/network", s.getPolicy)
	handle("POST /v1/sprites/{name}/policy/network", s.setPolicy)
	handle("PUT /v1/sprites/{name}/fs/write", s.writeFile)
	handle("GET /v1/sprites/{name}/fs/read", s.readFile)
	handle("GET /v1/sprites/{name}/fs/list", s.listFiles)
	handle("DELETE /v1/sprites/{name}/fs/delete", s.deleteFile)
	handle("POST /v1/sprites/{name}/fs/rename", s.renameFile)
	handle("POST /v1/sprites/{name}/fs/copy", s.copyFile)
	handle("POST /v1/sprites/{name}/fs/chmod", s.chmodFile)
	// No control connections: SDK clients fall back to direct exec.
	handle("/v1/sprites/{name}/control", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found"})
	})
	handle("/", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found"})
	})
	return mux
}

// serve wraps a route: it records the request, checks the token, and
// applies a queued fault before the route's own behaviour.
func (s *Server) serve(route string, h func(w http.ResponseWriter, r *http.Request, body []byte)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Method != http.MethodPut || !strings.HasSuffix(route, "/fs/write") {
			body, _ = io.ReadAll(io.LimitReader(r.Body, 1<<20))
		}
		i := s.record(route, r, body)
		if !s.authorised(w, r) {
			return
		}
		if strings.HasPrefix(r.URL.Path, "/v1/sprites/") {
			w.Header().Set("Sprite-Version", SpriteVersion)
		}
		if s.applyFault(route, i, w, r) {
			return
		}
		h(w, r, body)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// String names the server by its URL (never its token).
func (s *Server) String() string { return "spritestest.Server(" + s.URL() + ")" }
