package preview

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// CookieName is the cookie a bootstrap link sets for browsers, which can
// send no header on a navigation or a WebSocket handshake.
const CookieName = CookiePrefix + "preview"

// CookiePrefix begins the name of every cookie Paddock sets. Cookies are
// not scoped by port, so a browser sends a cookie of any Paddock server on
// this host to a preview too; the proxy never forwards one into a sandbox.
const CookiePrefix = "paddock_"

// BootstrapTTL bounds how long a bootstrap link can be used (once).
const BootstrapTTL = time.Minute

// bootstrapPath is the route part, under a preview, that trades a
// bootstrap code for the cookie.
const bootstrapPath = ".paddock/bootstrap"

// DialFunc opens a connection to port inside sandbox, whatever its network.
type DialFunc func(ctx context.Context, sandbox string, port int) (net.Conn, error)

// Config configures a Proxy.
type Config struct {
	Signer *Signer  // required: the key tokens were minted with
	Dial   DialFunc // required: how to reach a sandbox's port
	// Prefix is where the handler is mounted; default "/preview/".
	Prefix string
	// Activity, if set, is told of each forwarded request (a preview in
	// use keeps its sandbox from looking idle).
	Activity func(sandbox string)
	Logger   zerolog.Logger
}

// Proxy is the preview reverse proxy, an http.Handler for
// <Prefix><sandbox>/<port>/<path>. It forwards only requests carrying a
// valid, unrevoked token for that sandbox and port, in the Authorization
// header or the bootstrap cookie, never in the query string; the token is
// removed before the request reaches the sandbox.
type Proxy struct {
	cfg Config

	mu      sync.Mutex
	revoked map[string]time.Time // token -> its expiry
	codes   map[string]bootstrap // single-use bootstrap codes
}

type bootstrap struct {
	token   string
	sandbox string
	port    int
	expires time.Time
}

// NewProxy returns a proxy for cfg.
func NewProxy(cfg Config) *Proxy {
	cfg.Prefix = cmp.Or(cfg.Prefix, "/preview/")
	if !strings.HasSuffix(cfg.Prefix, "/") {
		cfg.Prefix += "/"
	}
	return &Proxy{cfg: cfg, revoked: map[string]time.Time{}, codes: map[string]bootstrap{}}
}

// Path is the route of a preview, relative to the server the proxy is
// mounted on: <Prefix><escaped sandbox>/<port>/.
func (p *Proxy) Path(sandbox string, port int) string {
	return p.cfg.Prefix + url.PathEscape(sandbox) + "/" + strconv.Itoa(port) + "/"
}

// Revoke ends token at once for every later request. It must be a valid
// token for sandbox and port (another's token is refused).
func (p *Proxy) Revoke(token, sandbox string, port int) error {
	expires, err := p.cfg.Signer.Verify(token, sandbox, port)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.Signer.now()
	for t, exp := range p.revoked {
		if !now.Before(exp) {
			delete(p.revoked, t) // expired anyway
		}
	}
	p.revoked[token] = expires
	return nil
}

// Bootstrap returns a single-use link, valid for BootstrapTTL, that sets
// token as an HttpOnly cookie scoped to the preview and redirects to it:
// the way to open a preview in a browser.
func (p *Proxy) Bootstrap(token, sandbox string, port int) (string, error) {
	expires, err := p.check(token, sandbox, port)
	if err != nil {
		return "", err
	}
	code := make([]byte, 24)
	_, _ = rand.Read(code)
	c := hex.EncodeToString(code)
	now := p.cfg.Signer.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, b := range p.codes {
		if !now.Before(b.expires) {
			delete(p.codes, k)
		}
	}
	p.codes[c] = bootstrap{token: token, sandbox: sandbox, port: port, expires: minTime(expires, now.Add(BootstrapTTL))}
	return p.Path(sandbox, port) + bootstrapPath + "?code=" + c, nil
}

// check verifies a token and that it is not revoked.
func (p *Proxy) check(token, sandbox string, port int) (time.Time, error) {
	expires, err := p.cfg.Signer.Verify(token, sandbox, port)
	if err != nil {
		return time.Time{}, err
	}
	p.mu.Lock()
	_, revoked := p.revoked[token]
	p.mu.Unlock()
	if revoked {
		return time.Time{}, ErrInvalidToken
	}
	return expires, nil
}

// route splits <Prefix><sandbox>/<port>/<rest>.
func (p *Proxy) route(r *http.Request) (sandbox string, port int, rest string, ok bool) {
	path, found := strings.CutPrefix(r.URL.EscapedPath(), p.cfg.Prefix)
	if !found {
		return "", 0, "", false
	}
	parts := strings.SplitN(path, "/", 3)
	if len(parts) < 3 {
		return "", 0, "", false
	}
	name, err := url.PathUnescape(parts[0])
	if err != nil || name == "" {
		return "", 0, "", false
	}
	port, err = strconv.Atoi(parts[1])
	if err != nil || port < 1 || port > 65535 || parts[1] != strconv.Itoa(port) {
		return "", 0, "", false
	}
	return name, port, parts[2], true
}

// credential is the bearer token of the header (the scheme in any case),
// else the cookie's.
func credential(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, _ := strings.Cut(h, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return ""
		}
		return token
	}
	if c, err := r.Cookie(CookieName); err == nil {
		return c.Value
	}
	return ""
}

type dialTarget struct {
	sandbox string
	port    int
}

type targetKey struct{}

// ServeHTTP authenticates and forwards one request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sandbox, port, rest, ok := p.route(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if rest == bootstrapPath {
		p.serveBootstrap(w, r, sandbox, port)
		return
	}
	token := credential(r)
	if token == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="paddock-preview"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if _, err := p.check(token, sandbox, port); err != nil {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if p.cfg.Activity != nil {
		p.cfg.Activity(sandbox)
	}
	ctx := context.WithValue(r.Context(), targetKey{}, dialTarget{sandbox, port})
	p.reverseProxy(rest).ServeHTTP(w, r.WithContext(ctx))
}

// reverseProxy forwards to the sandbox's port: the credential, the cookie
// and forwarding headers removed, Host localhost, a connection per request.
func (p *Proxy) reverseProxy(rest string) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			out := pr.Out
			out.URL.Scheme, out.URL.Host = "http", "localhost"
			out.URL.Path, out.URL.RawPath = "/"+rest, ""
			if u, err := url.Parse("/" + rest); err == nil {
				out.URL.Path, out.URL.RawPath = u.Path, u.RawPath
			}
			out.Host = "localhost"
			out.Header.Del("Authorization")
			out.Header.Del("X-Forwarded-For")
			stripCookie(out)
		},
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				t, _ := ctx.Value(targetKey{}).(dialTarget)
				return p.cfg.Dial(ctx, t.sandbox, t.port)
			},
			DisableKeepAlives: true,
		},
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if !errors.Is(err, context.Canceled) {
				p.cfg.Logger.Debug().Str("path", r.URL.Path).Str("error", err.Error()).Msg("preview: upstream failed")
			}
			http.Error(w, "preview unavailable", http.StatusBadGateway)
		},
	}
}

// stripCookie removes every Paddock cookie (the preview's, and any other
// Paddock server's on this host), keeping the sandbox's own.
func stripCookie(r *http.Request) {
	cookies := r.Cookies()
	r.Header.Del("Cookie")
	for _, c := range cookies {
		if !strings.HasPrefix(strings.ToLower(c.Name), CookiePrefix) {
			r.AddCookie(c)
		}
	}
}

// serveBootstrap trades a single-use code for the cookie.
func (p *Proxy) serveBootstrap(w http.ResponseWriter, r *http.Request, sandbox string, port int) {
	code := r.URL.Query().Get("code")
	p.mu.Lock()
	b, found := p.codes[code]
	delete(p.codes, code)
	p.mu.Unlock()
	now := p.cfg.Signer.now()
	if !found || b.sandbox != sandbox || b.port != port || !now.Before(b.expires) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	expires, err := p.check(b.token, sandbox, port)
	if err != nil {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: b.token, Path: p.Path(sandbox, port),
		Expires: expires, MaxAge: int(expires.Sub(now).Seconds()),
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, p.Path(sandbox, port), http.StatusSeeOther)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
