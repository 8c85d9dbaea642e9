// Package spritestest is a loopback Sprites API for tests: REST, exec and
// attach over WebSocket (and exec over HTTP, and control connections) with
// real processes (or the scripted drop command) behind them, sessions that
// outlive a disconnect and replay on attach, kill, restart and check,
// checkpoints, policies, URL settings, files with their watch, ports'
// watch, services with their logs, and the sprites' watch. It follows the
// provider's protocol as Sprites documents and serves it, not any adapter,
// and can inject the failures that protocol allows, per route and call. A
// sprite is a filesystem of its own (package stubfs): where Linux mount
// namespaces work its commands run changed into its root as sprite (when
// the server is root), and the fs routes reach the same files.
//
//	srv := spritestest.NewServer(t)
//	srv.Fail("POST /v1/sprites", spritestest.RateLimited(2))
//	a := sprites.New(sprites.Config{Token: paddock.NewSecret(srv.Token()), BaseURL: srv.URL()})
package spritestest

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
	"github.com/paddockhq/paddock/adapters/internal/stubserver"
)

// SpriteVersion is the Sprite-Version header the server sends.
const SpriteVersion = "v0.0.1-rc46"

// Request is one request the server received.
type Request = stubserver.Request

// Server is a loopback Sprites API. Use NewServer.
type Server struct {
	stubserver.Base
	t        testing.TB
	token    string
	exitHold time.Duration
	warm     time.Duration
	cold     time.Duration

	mu      sync.Mutex
	sprites map[string]*sprite
	scripts []Script
	nextPID int

	coldStart      int    // exec upgrades each new sprite refuses with 503
	capabilities   string // X-Sprite-Capabilities of exec upgrades
	mapped         bool   // sprites' processes see their own files (stubfs.Probe)
	withoutControl bool   // control connections answer 404
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

// WithoutControl makes the control route answer 404, as a sprite without
// control connections does (SDKs then fall back to a socket per command).
func WithoutControl() Option { return func(s *Server) { s.withoutControl = true } }

// NewServer starts a server on 127.0.0.1, closed when the test ends.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{t: t, exitHold: 5 * time.Second, warm: 30 * time.Second, cold: 5 * time.Minute,
		sprites: map[string]*sprite{}, nextPID: 19, capabilities: "signal", token: stubserver.RandomHex(32)}
	for _, o := range opts {
		o(s)
	}
	s.Start(t, "spritestest", stubserver.Style{DefaultBody: faultBody, ContentType: contentType}, func() http.Handler {
		s.mapped = stubfs.Probe(s.Root())
		return s.routes()
	}, s.shutdown)
	return s
}

// Token is the bearer token the server accepts.
func (s *Server) Token() string { return s.token }

// shutdown stops every session, as the server closes, and lets every
// sprite's mount namespace go.
func (s *Server) shutdown() {
	s.mu.Lock()
	var all []*session
	var services []*service
	var spaces []*stubfs.Space
	for _, sp := range s.sprites {
		for _, ss := range sp.sessions {
			all = append(all, ss)
		}
		services = append(services, sp.serviceList()...)
		spaces = append(spaces, sp.space)
	}
	s.mu.Unlock()
	for _, ss := range all {
		ss.shutdown()
	}
	s.stopServices(services)
	for _, sp := range spaces {
		sp.Retire()
	}
}

// authorised checks the bearer token; a sprite's routes answer with the
// Sprite-Version header.
func (s *Server) authorised(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Authorization") != "Bearer "+s.token {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "authentication failed"})
		return false
	}
	if strings.HasPrefix(r.URL.Path, "/v1/sprites/") {
		w.Header().Set("Sprite-Version", SpriteVersion)
	}
	return true
}

// routes maps every route of the API. The route names (the patterns, with
// "WS" for upgrades) are what Fail and Count take.
func (s *Server) routes() http.Handler {
	mux := s.Mux(s.authorised, stubserver.Routes{
		"POST /v1/sprites":                                   s.createSprite,
		"GET /v1/sprites":                                    s.listSprites,
		"GET /v1/sprites/{name}":                             s.getSprite,
		"PUT /v1/sprites/{name}":                             s.updateSprite,
		"DELETE /v1/sprites/{name}":                          s.deleteSprite,
		"HEAD /v1/sprites/{name}/exec":                       func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(http.StatusOK) },
		"POST /v1/sprites/{name}/exec":                       s.execHTTP,
		"POST /v1/sprites/{name}/exec/{session}/kill":        s.killSession,
		"POST /v1/sprites/{name}/checkpoint":                 s.createCheckpoint,
		"GET /v1/sprites/{name}/checkpoints":                 s.listCheckpoints,
		"GET /v1/sprites/{name}/checkpoints/{id}":            s.getCheckpoint,
		"POST /v1/sprites/{name}/checkpoints/{id}/restore":   s.restoreCheckpoint,
		"GET /v1/sprites/{name}/policy/network":              s.getPolicy,
		"POST /v1/sprites/{name}/policy/network":             s.setPolicy,
		"GET /v1/sprites/{name}/policy/privileges":           s.getOtherPolicy,
		"POST /v1/sprites/{name}/policy/privileges":          s.setOtherPolicy,
		"DELETE /v1/sprites/{name}/policy/privileges":        s.deleteOtherPolicy,
		"GET /v1/sprites/{name}/policy/resources":            s.getOtherPolicy,
		"POST /v1/sprites/{name}/policy/resources":           s.setOtherPolicy,
		"DELETE /v1/sprites/{name}/policy/resources":         s.deleteOtherPolicy,
		"PUT /v1/sprites/{name}/fs/write":                    s.writeFile,
		"GET /v1/sprites/{name}/fs/read":                     s.readFile,
		"GET /v1/sprites/{name}/fs/list":                     s.listFiles,
		"DELETE /v1/sprites/{name}/fs/delete":                s.deleteFile,
		"POST /v1/sprites/{name}/fs/rename":                  s.renameFile,
		"POST /v1/sprites/{name}/fs/copy":                    s.copyFile,
		"POST /v1/sprites/{name}/fs/chmod":                   s.chmodFile,
		"POST /v1/sprites/{name}/fs/chown":                   s.chownFile,
		"POST /v1/sprites/{name}/upgrade":                    s.upgradeSprite,
		"POST /v1/sprites/{name}/restart":                    s.restartSprite,
		"GET /v1/sprites/{name}/check":                       s.checkSprite,
		"GET /v1/sprites/{name}/services":                    s.listServices,
		"GET /v1/sprites/{name}/services/{service}":          s.getService,
		"PUT /v1/sprites/{name}/services/{service}":          s.putService,
		"DELETE /v1/sprites/{name}/services/{service}":       s.deleteService,
		"POST /v1/sprites/{name}/services/{service}/start":   s.startService,
		"POST /v1/sprites/{name}/services/{service}/stop":    s.stopService,
		"POST /v1/sprites/{name}/services/{service}/restart": s.restartService,
		"GET /v1/sprites/{name}/services/{service}/logs":     s.serviceLogs,
		"POST /v1/sprites/{name}/services/signal":            s.signalService,
		"/": notFound,
	}, "PUT /v1/sprites/{name}/fs/write", "POST /v1/sprites/{name}/exec")
	mux.HandleFunc("GET /v1/sprites/{name}/exec", s.execRoute)
	mux.HandleFunc("GET /v1/sprites/{name}/exec/{session}", s.sessionRoute)
	mux.HandleFunc("GET /v1/sprites/{name}/control", s.serve("WS /v1/sprites/{name}/control", s.controlSocket))
	mux.HandleFunc("GET /v1/sprites/{name}/fs/watch", s.serve("WS /v1/sprites/{name}/fs/watch", s.watchFiles))
	mux.HandleFunc("GET /v1/sprites/{name}/ports/watch", s.serve("WS /v1/sprites/{name}/ports/watch", s.watchPorts))
	mux.HandleFunc("GET /v1/sprites/{name}/proxy", s.serve("WS /v1/sprites/{name}/proxy", s.proxyRoute))
	return mux
}

// serve wraps an exec route, as Mux wraps the others: it records the
// request, checks the token, and applies a queued fault before the
// route's own behaviour.
func (s *Server) serve(route string, h stubserver.Handler) http.HandlerFunc {
	return s.Route(route, true, s.authorised, h)
}

// notFound is the API's answer to a route it does not have.
func notFound(w http.ResponseWriter, _ *http.Request, _ []byte) {
	writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// String names the server by its URL (never its token).
func (s *Server) String() string { return "spritestest.Server(" + s.URL() + ")" }

// Mapped reports whether sandboxes' processes see the sandbox's own files
// at the sandbox's paths here (stubfs.Probe: Linux mount namespaces);
// without, they run on this machine's paths.
func (s *Server) Mapped() bool { return s.mapped }
