// Package e2btest is a loopback E2B for tests: the control-plane REST API
// (create, list with metadata filters and paging, get, kill, timeout,
// pause, connect, network, metrics, snapshots and forks, template names
// and tags, secrets, volumes) with a manual clock for TTLs, the volume
// content service (/volumecontent), and envd, the daemon of each sandbox:
// the Process service over the Connect protocol (connect-go, as envd
// itself) with real processes behind it, /files and /health. envd calls
// are routed by the E2b-Sandbox-Id header (or a 49983-<id> host), as E2B's
// proxy routes them. It follows the provider's protocol (as its API server
// and envd answer), not any adapter, and can inject the failures that
// protocol allows. A sandbox is a filesystem of its own (package stubfs):
// where Linux mount namespaces work (as root, or with unprivileged user
// namespaces) its processes run changed into its root, with this machine's
// system directories read-only, and /files and the Filesystem service
// reach the same files, so an absolute path means one file to both.
// Processes run as the user asked for (user by default, root) when the
// server is root, each with its home; elsewhere they run as the server's
// user, and without mount namespaces on this machine's paths.
//
//	srv := e2btest.NewServer(t)
//	a := e2b.New(e2b.Config{APIKey: paddock.NewSecret(srv.Key()), BaseURL: srv.URL(), EnvdURL: srv.URL()})
package e2btest

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
	"github.com/paddockhq/paddock/adapters/internal/stubserver"
)

// EnvdVersion is the envd version sandboxes report.
const EnvdVersion = "0.6.13"

// Request is one request the server received.
type Request = stubserver.Request

// Server is a loopback E2B. Use NewServer.
type Server struct {
	stubserver.Base
	t   testing.TB
	key string

	mu        sync.Mutex
	now       time.Time // the manual clock's time
	sandboxes map[string]*sandbox
	maxTTL    time.Duration
	envdMux   http.Handler
	mapped    bool // processes see the sandbox's own files at its paths (stubfs.Probe)
	watches   watchers
	secrets   []*secret           // oldest first
	samples   map[string][]sample // by sandbox id, oldest first; kept after a kill
	snapshots []*snapshotTemplate
	volumes   []*volume // oldest first
}

// Option configures NewServer.
type Option func(*Server)

// WithKey sets the accepted API key (default: random, with E2B's e2b_
// prefix).
func WithKey(key string) Option { return func(s *Server) { s.key = key } }

// NewServer starts a server on 127.0.0.1, closed when the test ends. Its
// clock is manual: it starts at the wall clock's time and moves only with
// Advance.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{t: t, key: "e2b_" + randomID(32), now: time.Now().UTC().Truncate(time.Second),
		sandboxes: map[string]*sandbox{}, samples: map[string][]sample{}, maxTTL: 24 * time.Hour, watches: watchers{byID: map[string]*watcher{}}}
	for _, o := range opts {
		o(s)
	}
	s.Start(t, "e2btest", stubserver.Style{DefaultBody: faultBody, ContentType: stubserver.JSONOrText("application/json")},
		func() http.Handler {
			s.envdMux = s.envdHandler()
			s.mapped = stubfs.Probe(s.Root())
			return s.routes()
		}, s.killAll)
	return s
}

// Key is the API key the server accepts.
func (s *Server) Key() string { return s.key }

// String names the server by its URL (never its key).
func (s *Server) String() string { return "e2btest.Server(" + s.URL() + ")" }

// killAll stops every sandbox's processes, as the server closes.
func (s *Server) killAll() { stubserver.Each(&s.mu, s.sandboxes, (*sandbox).killAll) }

// routes serves both planes: a request that names a sandbox (the routing
// header, or a 49983-<id> host) goes to that sandbox's envd, any other to
// the control plane.
func (s *Server) routes() http.Handler {
	control := withSecrets(s.Mux(s.authorized, stubserver.Routes{
		"POST /sandboxes":                 s.create,
		"POST /v2/sandboxes":              s.create, // the current JS SDK's form
		"GET /v2/sandboxes":               s.list,
		"GET /sandboxes":                  s.listLegacy,
		"GET /sandboxes/{id}":             s.get,
		"DELETE /sandboxes/{id}":          s.kill,
		"POST /sandboxes/{id}/timeout":    s.setTimeout,
		"POST /sandboxes/{id}/pause":      s.pause,
		"POST /sandboxes/{id}/connect":    s.connect,
		"POST /v2/sandboxes/{id}/connect": s.connect,
		"PUT /sandboxes/{id}/network":     s.network,
		"GET /sandboxes/{id}/metrics":     s.sandboxMetrics,
		"POST /sandboxes/{id}/snapshots":  s.createSnapshot,
		"POST /sandboxes/{id}/fork":       s.fork,
		"GET /snapshots":                  s.listSnapshots,
		"DELETE /templates/{id}":          s.deleteTemplate,
		"GET /templates/{first}/{second}": s.templateRoutes,
		"POST /templates/tags":            s.assignTags,
		"DELETE /templates/tags":          s.removeTags,
		"GET /secrets":                    s.listSecrets,
		"POST /secrets":                   s.createSecret,
		"GET /secrets/{id}":               s.getSecret,
		"POST /secrets/{id}":              s.updateSecret,
		"DELETE /secrets/{id}":            s.deleteSecret,
		"POST /volumes":                   s.createVolume,
		"GET /volumes":                    s.listVolumes,
		"GET /volumes/{id}":               s.getVolume,
		"DELETE /volumes/{id}":            s.deleteVolume,
		"/": func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			apiError(w, http.StatusNotFound, "not found")
		},
	}, secretRoutes...))
	volumeContent := s.Mux(s.volumeAuthorized, stubserver.Routes{
		"GET /volumecontent/{id}/path":    s.statPath,
		"PATCH /volumecontent/{id}/path":  s.updatePath,
		"DELETE /volumecontent/{id}/path": s.deletePath,
		"GET /volumecontent/{id}/dir":     s.listDir,
		"POST /volumecontent/{id}/dir":    s.makeDir,
		"GET /volumecontent/{id}/file":    s.readFile,
		"PUT /volumecontent/{id}/file":    s.writeFile,
	}, "PUT /volumecontent/{id}/file")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch id := envdTarget(r); {
		case id != "":
			s.envd(w, r, id)
		case strings.HasPrefix(r.URL.Path, "/volumecontent/"):
			volumeContent.ServeHTTP(w, r)
		default:
			control.ServeHTTP(w, r)
		}
	})
}

// authorized checks the key, answering E2B's 401 without it.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("X-API-Key") != s.key {
		apiError(w, http.StatusUnauthorized, "Invalid API key, it must start with 'e2b_' prefix")
		return false
	}
	return true
}

// apiError answers E2B's error body: the status again as code, and a
// message.
func apiError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"code": status, "message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// randomID is n characters of [a-z0-9], as E2B's ids are made.
func randomID(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// Mapped reports whether sandboxes' processes see the sandbox's own files
// at the sandbox's paths here (stubfs.Probe: Linux mount namespaces);
// without, they run on this machine's paths.
func (s *Server) Mapped() bool { return s.mapped }
