package main

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/client"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

//go:embed web
var webFiles embed.FS

// tokenProtocol prefixes the token in the WebSocket subprotocols the page
// offers: a browser can set no header on a WebSocket handshake. The page
// offers pageProtocol too, the one the server chooses.
const (
	tokenProtocol = "paddock-token."
	pageProtocol  = "paddock"
)

// console serves the web console of one runtime.
type console struct {
	rt        *actors.Runtime
	providers []paddock.Provider
	token     string
	log       zerolog.Logger
	limits    consoleLimits
	sockets   socketCounts
	metrics   prometheus.Gatherer // the runtime's metrics; nil = none
	failures  atomic.Uint64       // requests and streams of this console that failed
	policies  policies            // the network policies it applied
}

// serveOptions are the console's flags.
type serveOptions struct {
	addr, root string
	verbose    bool
	limits     consoleLimits
}

// serveFlags are the flags of the serve command.
func serveFlags() (*flag.FlagSet, *serveOptions) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	o := &serveOptions{}
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen address (loopback unless you mean otherwise)")
	fs.StringVar(&o.root, "root", "", "local provider root (default: the user's cache directory)")
	fs.BoolVar(&o.verbose, "v", false, "log to stderr")
	fs.DurationVar(&o.limits.firstMessage, "socket-first-message", defaultFirstMessageWait, "how long a new WebSocket may wait before its first message")
	fs.IntVar(&o.limits.perClient, "sockets-per-client", defaultSocketsPerClient, "open WebSockets one client address may hold")
	fs.Int64Var(&o.limits.maxUpload, "max-upload", defaultMaxUpload, "bytes one file upload may hold (a larger one is refused, the file left as it was)")
	fs.IntVar(&o.limits.scrollback, "scrollback", defaultScrollback, "lines a terminal view keeps that scrolled off its top (the oldest go)")
	return fs, o
}

func serveCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, o := serveFlags()
	fs.SetOutput(stderr)
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "demo: serve takes no arguments, got %q\n", fs.Args())
		return exitUsage
	}
	if err := o.limits.check(); err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return exitUsage
	}
	addr, root, verbose := &o.addr, &o.root, &o.verbose
	log := zerolog.Nop()
	if *verbose {
		log = zerolog.New(zerolog.ConsoleWriter{Out: stderr}).With().Timestamp().Logger()
	}
	metrics := prometheus.NewRegistry()
	rt, reg, stop, err := startRuntime(*root, log, metrics)
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return exitError
	}
	defer stop()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return exitError
	}
	c := newConsole(rt, reg, log)
	c.limits = o.limits
	c.metrics = metrics
	h, err := rt.Adapter(paddock.ProviderLocal).Create(ctx, "demo", paddock.CreateOpts{})
	if err != nil {
		fmt.Fprintln(stderr, "demo: creating the demo sandbox:", err)
	}
	fmt.Fprintf(stdout, "Paddock console: open %s\n", c.url(ln.Addr().String()))
	if a, err := reg.Lookup(paddock.ProviderLocal); err == nil && h.Name != "" {
		fmt.Fprintf(stdout, "(the sandbox local/demo keeps its files in %s)\n", paddock.HostPath(a, h, "/"))
	}
	fmt.Fprintln(stdout, "(listening on loopback only; the token keeps other local users out; Ctrl-C stops)")
	if err := c.serve(ctx, ln); err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return exitError
	}
	return 0
}

func newConsole(rt *actors.Runtime, reg paddock.Registry, log zerolog.Logger) *console {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return &console{rt: rt, providers: reg.Providers(), token: hex.EncodeToString(b), log: log,
		limits: consoleLimits{firstMessage: defaultFirstMessageWait, perClient: defaultSocketsPerClient, maxUpload: defaultMaxUpload, scrollback: defaultScrollback}}
}

// url is the address to open, token included. The token is in the
// fragment, which a browser never sends: the page keeps it in its
// origin's local storage and sends it as a Bearer header.
func (c *console) url(addr string) string { return "http://" + addr + "/#token=" + c.token }

// serve runs the console on ln until ctx ends, and returns once every
// connection it accepted is closed (or hijacked: a WebSocket is its
// handler's).
func (c *console) serve(ctx context.Context, ln net.Listener) error {
	var conns sync.WaitGroup
	defer conns.Wait()
	srv := &http.Server{Handler: c.handler(), ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(_ net.Conn, state http.ConnState) {
			switch state {
			case http.StateNew:
				conns.Add(1)
			case http.StateClosed, http.StateHijacked:
				conns.Done()
			}
		}}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			_ = srv.Close() // what did not finish in time is cut
		}
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// handler is the console's routes: the page (which holds no secret) to
// anyone on this machine, everything else behind the token.
func (c *console) handler() http.Handler {
	static, _ := fs.Sub(webFiles, "web")
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServer(http.FS(static)))
	for pattern, h := range map[string]http.HandlerFunc{
		"GET /api/providers":      c.providersAPI,
		"GET /api/sandboxes":      c.listSandboxes,
		"POST /api/sandboxes":     c.createSandbox,
		"DELETE /api/sandboxes":   c.destroySandbox,
		"GET /api/sessions":       c.listSessions,
		"POST /api/terminate":     c.terminate,
		"GET /api/policy":         c.getPolicy,
		"PUT /api/policy":         c.putPolicy,
		"GET /api/checkpoints":    c.listCheckpoints,
		"POST /api/checkpoints":   c.createCheckpoint,
		"DELETE /api/checkpoints": c.deleteCheckpoint,
		"POST /api/restore":       c.restoreCheckpoint,
		"POST /api/fork":          c.forkCheckpoint,
		"GET /api/files":          c.listFiles,
		"GET /api/file":           c.downloadFile,
		"PUT /api/file":           c.uploadFile,
		"DELETE /api/file":        c.deleteFile,
		"GET /ws":                 c.socket,
		"GET /metrics":            c.metricsPage,
		"GET /api/stats":          c.stats,
	} {
		mux.Handle(pattern, c.withToken(h))
	}
	return c.guard(mux)
}

// sameOrigin refuses a state-changing request a browser sent from another
// origin (another port of 127.0.0.1 included), by the browser's
// Sec-Fetch-Site or, failing that, its Origin. Reads are not
// state-changing; the WebSocket, a GET, checks its Origin itself.
var sameOrigin = http.NewCrossOriginProtection()

// guard admits a request only from a loopback Host (against DNS
// rebinding) and, when it changes state, from the console's own page.
func (c *console) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, "forbidden host", http.StatusForbidden)
			return
		}
		if err := sameOrigin.Check(r); err != nil {
			http.Error(w, "forbidden: a request from another origin", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withToken admits a request that carries the token in a Bearer header,
// or, for a WebSocket handshake, in a subprotocol. No cookie is a
// credential: a browser sends a cookie of 127.0.0.1 to every port of it,
// so a cookie would hand the token to any server on this machine.
func (c *console) withToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !c.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="paddock"`)
			http.Error(w, "unauthorized: open the URL the demo printed", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (c *console) authorized(r *http.Request) bool {
	// An authorization scheme is case-insensitive (RFC 9110, 11.1).
	if scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") && c.valid(token) {
		return true
	}
	if websocket.IsWebSocketUpgrade(r) {
		for _, p := range websocket.Subprotocols(r) {
			if token, ok := strings.CutPrefix(p, tokenProtocol); ok && c.valid(token) {
				return true
			}
		}
	}
	return false
}

func (c *console) valid(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(c.token)) == 1
}

// loopbackHost reports a Host header naming this machine's loopback.
func loopbackHost(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// writeJSON answers v, or the error with a status from its kind (and
// counts it among the failures the live panel shows).
func (c *console) writeJSON(w http.ResponseWriter, v any, err error) {
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		c.failures.Add(1)
		status := http.StatusBadGateway
		switch {
		case errors.Is(err, paddock.ErrNotFound):
			status = http.StatusNotFound
		case errors.Is(err, paddock.ErrFileTooLarge):
			status = http.StatusRequestEntityTooLarge
		case errors.Is(err, paddock.ErrInvalid):
			status = http.StatusBadRequest
		case errors.Is(err, paddock.ErrNotSupported):
			status = http.StatusNotImplemented
		case errors.Is(err, paddock.ErrDenied):
			status = http.StatusForbidden
		}
		kind := paddock.KindOf(err)
		var unknown *paddock.UnknownProviderError
		if errors.As(err, &unknown) {
			status, kind = http.StatusBadRequest, paddock.KindInvalid // the caller named no provider of the runtime
		}
		var inv *paddock.InvalidError
		if errors.As(err, &inv) && inv.Status == http.StatusRequestEntityTooLarge {
			status = inv.Status
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error(), "kind": string(kind)})
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}

func (c *console) providersAPI(w http.ResponseWriter, _ *http.Request) {
	type provider struct {
		Name         string                `json:"name"`
		Capabilities paddock.CapabilitySet `json:"capabilities"`
	}
	out := []provider{}
	for _, p := range c.providers {
		out = append(out, provider{Name: string(p), Capabilities: c.rt.Adapter(p).Capabilities()})
	}
	c.writeJSON(w, out, nil)
}

// sandbox is the sandbox the query names (provider, name) and the
// runtime's adapter for it, whose calls answer an unknown provider loudly.
func (c *console) sandbox(r *http.Request) (*client.Client, paddock.Handle) {
	h := paddock.Handle{Provider: paddock.Provider(r.URL.Query().Get("provider")), Name: r.URL.Query().Get("name")}
	return c.rt.Adapter(h.Provider), h
}

func (c *console) listSandboxes(w http.ResponseWriter, r *http.Request) {
	names, err := c.rt.Adapter(paddock.Provider(r.URL.Query().Get("provider"))).ListAllNames(r.Context())
	if names == nil {
		names = []string{}
	}
	c.writeJSON(w, names, err)
}

func (c *console) createSandbox(w http.ResponseWriter, r *http.Request) {
	var req struct{ Provider, Name string }
	if err := decodeBody(w, r, &req); err != nil {
		c.writeJSON(w, nil, err)
		return
	}
	h, err := c.rt.Adapter(paddock.Provider(req.Provider)).Create(r.Context(), req.Name, paddock.CreateOpts{})
	c.writeJSON(w, h, err)
}

func (c *console) destroySandbox(w http.ResponseWriter, r *http.Request) {
	a, h := c.sandbox(r)
	err := a.Destroy(r.Context(), h)
	if err == nil {
		c.policies.forget(h)
	}
	c.writeJSON(w, map[string]bool{"ok": true}, err)
}

func (c *console) listSessions(w http.ResponseWriter, r *http.Request) {
	a, h := c.sandbox(r)
	sessions, err := a.ListSessions(r.Context(), h)
	if sessions == nil {
		sessions = []paddock.Session{}
	}
	c.writeJSON(w, sessions, err)
}

func (c *console) terminate(w http.ResponseWriter, r *http.Request) {
	var req struct{ Provider, Name, Session, Mode string }
	if err := decodeBody(w, r, &req); err != nil {
		c.writeJSON(w, nil, err)
		return
	}
	h := paddock.Handle{Provider: paddock.Provider(req.Provider), Name: req.Name}
	err := c.rt.Adapter(h.Provider).TerminateSession(r.Context(), h, req.Session, paddock.TerminateOpts{Mode: paddock.TerminateMode(req.Mode)})
	c.writeJSON(w, map[string]bool{"ok": true}, err)
}

// maxRequestBody bounds the JSON body of an API request.
const maxRequestBody = 64 << 10

// decodeBody reads r's JSON body into v: one JSON value and nothing after
// it, at most maxRequestBody bytes (more is 413).
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBody))
	err := dec.Decode(v)
	if err == nil && dec.Decode(&struct{}{}) != io.EOF {
		return &paddock.InvalidError{Detail: "request body: more than one JSON value"}
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return &paddock.InvalidError{Detail: fmt.Sprintf("request body: larger than %d bytes", maxRequestBody), Status: http.StatusRequestEntityTooLarge}
	case err != nil:
		return &paddock.InvalidError{Detail: "request body: " + err.Error()}
	}
	return nil
}
