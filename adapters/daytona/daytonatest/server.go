// Package daytonatest is a loopback Daytona for tests (yours too): the
// control plane under /api with Daytona's state machine, guards and error
// bodies, and failure injection per route. It follows the provider's real
// behaviour where that differs from what clients assume: stop is not
// idempotent (400 on a stopped sandbox), a delete frees the name at once,
// create checks the snapshot before the name. It is also the preview proxy
// of its domain (ProxyDomain). A sandbox is a filesystem of
// its own (package stubfs): where Linux mount namespaces work its commands
// run changed into its root as daytona (when the server is root), and the
// file routes reach the same files.
package daytonatest

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/stubfs"
	"github.com/paddockhq/paddock/adapters/internal/stubserver"
)

// Request is one request the server received.
type Request = stubserver.Request

// Server is a loopback Daytona. Use NewServer.
type Server struct {
	stubserver.Base
	key string

	mu         sync.Mutex
	sandboxes  map[string]*sandbox // by id, deleted ones until they are destroyed
	order      []string            // ids in creation order
	snapshots  map[string]bool
	transition time.Duration // how long starting, stopping and the like take
	destroying time.Duration // how long a deleted sandbox stays visible by id
	held       map[string]bool
	mapped     bool // processes see the sandbox's own files at its paths (stubfs.Probe)
	toolboxMux http.Handler
	idlePolls  int // follow polls of nothing before the exit code is checked
	frameSize  int // the largest follow frame
	cutFollows int // follows to close right after their replay
	noExits    int // commands whose exit code never appears
	ssh        []*sshAccess
	images     []*snapshot              // the organization's snapshots and the general ones
	volumes    []*volume                // oldest first, deleted ones too
	signed     map[string]signedPreview // by token
}

// Option configures NewServer.
type Option func(*Server)

// WithKey sets the accepted API key (default: random, dtn_ prefixed).
func WithKey(key string) Option { return func(s *Server) { s.key = key } }

// WithTransitions makes every state change (creating, starting, stopping,
// destroying) take d of real time; the default is none.
func WithTransitions(d time.Duration) Option {
	return func(s *Server) { s.transition, s.destroying = d, d }
}

// WithFollowIdle sets how many 20 ms polls of nothing a log follow waits
// before it looks for the exit code (default 50: about a second, as the
// daemon does).
func WithFollowIdle(polls int) Option { return func(s *Server) { s.idlePolls = max(polls, 1) } }

// WithFrameSize sets the largest follow frame (default 1024, as the
// daemon sends), so tests can cut markers anywhere.
func WithFrameSize(n int) Option { return func(s *Server) { s.frameSize = max(n, 1) } }

// CutFollows makes the next n log follows close normally (1000) right
// after replaying the journal so far, whether or not the command ended
// (the early close some hosted daemons show).
func (s *Server) CutFollows(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cutFollows += n
}

// WithholdExits makes the next n session commands never record an exit
// code (as when a command's exit kills its session's shell): their
// follows never close by themselves.
func (s *Server) WithholdExits(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noExits += n
}

// take reports whether one of n queued faults applies, using it.
func (s *Server) take(n *int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if *n == 0 {
		return false
	}
	*n--
	return true
}

// WithSnapshots sets the built-in (general) snapshots creates may name
// beside the organization's own (default: "default" and "paddock-test"; an
// absent snapshot is always the default).
func WithSnapshots(names ...string) Option {
	return func(s *Server) {
		s.snapshots = map[string]bool{}
		for _, n := range names {
			s.snapshots[n] = true
		}
	}
}

// NewServer starts a server on 127.0.0.1, closed when the test ends.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{key: "dtn_" + stubserver.RandomHex(24), sandboxes: map[string]*sandbox{}, held: map[string]bool{}, signed: map[string]signedPreview{},
		snapshots: map[string]bool{"default": true, "paddock-test": true},
		idlePolls: defaultIdlePoll, frameSize: followFrame}
	for _, o := range opts {
		o(s)
	}
	for _, name := range slices.Sorted(maps.Keys(s.snapshots)) {
		general := s.newSnapshot(name, "daytonaio/sandbox:0.190.0", nil, 1, 1, 3, "")
		general.general, general.state = true, "active"
	}
	s.Start(t, "daytonatest", stubserver.Style{DefaultBody: faultBody, ContentType: stubserver.JSONOrText("application/json; charset=utf-8")},
		func() http.Handler {
			s.mapped = stubfs.Probe(s.Root())
			s.toolboxMux = s.toolboxHandler()
			return s.routes()
		}, s.dropAll)
	return s
}

// APIURL is the control plane's base, what an adapter's API URL is.
func (s *Server) APIURL() string { return s.URL() + "/api" }

// Key is the API key the server accepts.
func (s *Server) Key() string { return s.key }

// String names the server by its URL (never its key).
func (s *Server) String() string { return "daytonatest.Server(" + s.URL() + ")" }

// dropAll ends every sandbox's sessions, as the server closes.
func (s *Server) dropAll() {
	stubserver.Each(&s.mu, s.sandboxes, func(sb *sandbox) {
		sb.dropSessions()
		sb.space.Retire()
	})
}

// routes serves the control plane under /api.
func (s *Server) routes() http.Handler {
	mux := s.Mux(s.authorized, stubserver.Routes{
		"POST /api/sandbox":                                                           s.create,
		"GET /api/sandbox":                                                            s.list,
		"GET /api/sandbox/{idOrName}":                                                 s.get,
		"DELETE /api/sandbox/{idOrName}":                                              s.delete,
		"POST /api/sandbox/{idOrName}/start":                                          s.start,
		"POST /api/sandbox/{idOrName}/stop":                                           s.stop,
		"POST /api/sandbox/{idOrName}/archive":                                        s.archive,
		"POST /api/sandbox/{idOrName}/pause":                                          s.pause,
		"POST /api/sandbox/{idOrName}/recover":                                        s.recover,
		"POST /api/sandbox/{idOrName}/network-settings":                               s.network,
		"PUT /api/sandbox/{idOrName}/labels":                                          s.replaceLabels,
		"POST /api/sandbox/{idOrName}/autostop/{interval}":                            s.setInterval("autostop"),
		"POST /api/sandbox/{idOrName}/autoarchive/{interval}":                         s.setInterval("autoarchive"),
		"POST /api/sandbox/{idOrName}/autodelete/{interval}":                          s.setInterval("autodelete"),
		"POST /api/sandbox/{idOrName}/public/{isPublic}":                              s.setPublic,
		"POST /api/sandbox/{idOrName}/last-activity":                                  s.lastActivity,
		"GET /api/sandbox/{idOrName}/toolbox-proxy-url":                               s.toolboxProxyURL,
		"POST /api/sandbox/{idOrName}/resize":                                         s.resize,
		"POST /api/volumes":                                                           s.createVolume,
		"GET /api/volumes":                                                            s.listVolumes,
		"GET /api/volumes/{volumeId}":                                                 s.getVolume,
		"GET /api/volumes/by-name/{name}":                                             s.getVolumeByName,
		"DELETE /api/volumes/{volumeId}":                                              s.deleteVolume,
		"POST /api/sandbox/{idOrName}/snapshot":                                       s.snapshotSandbox,
		"POST /api/snapshots":                                                         s.createSnapshot,
		"GET /api/snapshots":                                                          s.listSnapshots,
		"GET /api/snapshots/{id}":                                                     s.getSnapshot,
		"DELETE /api/snapshots/{id}":                                                  s.deleteSnapshot,
		"POST /api/snapshots/{id}/activate":                                           s.activateSnapshot,
		"POST /api/snapshots/{id}/deactivate":                                         s.deactivateSnapshot,
		"POST /api/sandbox/{idOrName}/fork":                                           s.fork,
		"GET /api/sandbox/{idOrName}/forks":                                           s.forks,
		"GET /api/sandbox/{idOrName}/ancestors":                                       s.forks,
		"GET /api/sandbox/{idOrName}/parent":                                          s.parent,
		"POST /api/sandbox/{idOrName}/ssh-access":                                     s.createSSHAccess,
		"DELETE /api/sandbox/{idOrName}/ssh-access":                                   s.revokeSSHAccess,
		"GET /api/sandbox/ssh-access/validate":                                        s.validateSSHAccess,
		"GET /api/sandbox/{idOrName}/ports/{port}/preview-url":                        s.previewURL,
		"GET /api/sandbox/{idOrName}/ports/{port}/signed-preview-url":                 s.signedPreviewURL,
		"POST /api/sandbox/{idOrName}/ports/{port}/signed-preview-url/{token}/expire": s.expireSignedPreviewURL,
		"/": func(w http.ResponseWriter, r *http.Request, _ []byte) {
			apiError(w, r, http.StatusNotFound, "Cannot "+r.Method+" "+r.URL.Path)
		},
	})
	mux.HandleFunc("GET /api/config", s.Route("GET /api/config", false, nil, s.config))
	mux.HandleFunc("/toolbox/{id}/{rest...}", s.toolbox)
	preview := s.Route("PREVIEW", false, nil, func(w http.ResponseWriter, r *http.Request, _ []byte) { s.preview(w, r) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.isPreview(r) {
			preview(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// authorized checks the key, answering Daytona's 401 without it.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Authorization") != "Bearer "+s.key {
		apiError(w, r, http.StatusUnauthorized, "Unauthorized")
		return false
	}
	return true
}

// apiError answers Daytona's control-plane error body.
func apiError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	writeJSON(w, status, map[string]any{"path": r.URL.Path, "timestamp": time.Now().UTC().Format(time.RFC3339Nano),
		"statusCode": status, "error": http.StatusText(status), "message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// newID is a sandbox id shaped like Daytona's (a UUID).
func newID() string {
	h := stubserver.RandomHex(32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
}

// trimmed splits a comma list into its non-empty trimmed entries.
func trimmed(list string) []string {
	var out []string
	for _, e := range strings.Split(list, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// Mapped reports whether sandboxes' processes see the sandbox's own files
// at the sandbox's paths here (stubfs.Probe: Linux mount namespaces);
// without, they run on this machine's paths.
func (s *Server) Mapped() bool { return s.mapped }
