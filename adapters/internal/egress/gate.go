package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// The defaults of Config's bounds.
const (
	DefaultMaxConns       = 256
	DefaultRequestTimeout = 30 * time.Second
	DefaultDialTimeout    = 15 * time.Second
	// maxHeaderBytes bounds a request's line and headers (and what the
	// reader holds ahead of them).
	maxHeaderBytes = 64<<10 + readAhead
	readAhead      = 4096
)

// Config is a Gate's dependencies and bounds; zero values take the
// defaults.
type Config struct {
	// Resolve answers the addresses of an allowed name (default: the
	// system's resolver). Tests pass their own.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to one address (default: a net.Dialer).
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// MaxConns bounds the connections open through the Gate at once
	// (default DefaultMaxConns); one more is answered 503 and closed.
	MaxConns int
	// RequestTimeout bounds the wait for a request's line and headers
	// (default DefaultRequestTimeout); a client silent for longer is
	// closed.
	RequestTimeout time.Duration
	// DialTimeout bounds resolving a name and connecting to it (default
	// DefaultDialTimeout).
	DialTimeout time.Duration
	// Verdict, when set, is told each decision: allowed or denied.
	Verdict func(allowed bool)
	// Logger takes a debug line per decision (default: none).
	Logger zerolog.Logger
}

func (c *Config) defaults() {
	if c.Resolve == nil {
		c.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if c.Dial == nil {
		c.Dial = (&net.Dialer{}).DialContext
	}
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
}

// Gate is one sandbox's way out. Use New; its methods are safe for
// concurrent use.
type Gate struct {
	cfg Config

	mu     sync.Mutex
	rules  Rules
	open   map[*link]bool // the connections under way
	closed bool
	wg     sync.WaitGroup // one per connection being served
}

// New makes a Gate enforcing allow (see Compile).
func New(cfg Config, allow []string) *Gate {
	cfg.defaults()
	return &Gate{cfg: cfg, rules: Compile(allow), open: map[*link]bool{}}
}

// link is one client connection and, while it goes somewhere, the host
// it goes to and the connection there.
type link struct {
	client   net.Conn
	host     string   // "" until a request was allowed
	upstream net.Conn // nil when none is open
	cut      bool
}

// Serve answers the connections l accepts until l is closed (then nil) or
// fails.
func (g *Gate) Serve(l net.Listener) error {
	for {
		c, err := l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.serve(c)
		}()
	}
}

// SetPolicy replaces the allow list; connections to names it no longer
// allows are cut at once.
func (g *Gate) SetPolicy(allow []string) {
	g.mu.Lock()
	g.rules = Compile(allow)
	var cut []*link
	for l := range g.open {
		if l.host != "" && !g.rules.Allows(l.host) {
			cut = append(cut, l)
		}
	}
	g.mu.Unlock()
	for _, l := range cut {
		g.cut(l)
	}
}

// Open is how many connections are under way.
func (g *Gate) Open() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.open)
}

// Close cuts every connection and waits for their goroutines; the
// listeners passed to Serve are the caller's to close.
func (g *Gate) Close() {
	g.mu.Lock()
	g.closed = true
	all := make([]*link, 0, len(g.open))
	for l := range g.open {
		all = append(all, l)
	}
	g.mu.Unlock()
	for _, l := range all {
		g.cut(l)
	}
	g.wg.Wait()
}

// cut closes a link's connections.
func (g *Gate) cut(l *link) {
	g.mu.Lock()
	l.cut = true
	up := l.upstream
	g.mu.Unlock()
	_ = l.client.Close()
	if up != nil {
		_ = up.Close()
	}
}

// track counts l among the open links; false when the Gate is closed or
// full.
func (g *Gate) track(l *link) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || len(g.open) >= g.cfg.MaxConns {
		return false
	}
	g.open[l] = true
	return true
}

func (g *Gate) untrack(l *link) {
	g.mu.Lock()
	delete(g.open, l)
	g.mu.Unlock()
}

// decide applies the policy to host for l: allowed, the link now goes
// there; denied, the refusal's words.
func (g *Gate) decide(l *link, host string) (bool, string) {
	g.mu.Lock()
	allowed := g.rules.Allows(host)
	why := ""
	if allowed {
		l.host = host
	} else {
		why = g.rules.refusal(host)
	}
	g.mu.Unlock()
	if g.cfg.Verdict != nil {
		g.cfg.Verdict(allowed)
	}
	g.cfg.Logger.Debug().Str("host", host).Bool("allowed", allowed).Msg("egress")
	return allowed, why
}

// attach records up as l's upstream; false (up closed) when l was cut
// meanwhile.
func (g *Gate) attach(l *link, up net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if l.cut {
		_ = up.Close()
		return false
	}
	l.upstream = up
	return true
}

// detach forgets l's upstream and closes it.
func (g *Gate) detach(l *link) {
	g.mu.Lock()
	up := l.upstream
	l.upstream = nil
	g.mu.Unlock()
	if up != nil {
		_ = up.Close()
	}
}

// serve answers one client connection: requests one after another until
// a tunnel takes the connection over, a refusal ends it, or it closes.
func (g *Gate) serve(c net.Conn) {
	defer c.Close()
	l := &link{client: c}
	if !g.track(l) {
		refuse(c, http.StatusServiceUnavailable, fmt.Sprintf("paddock egress: this sandbox has %d connections open, the most it may", g.cfg.MaxConns))
		return
	}
	defer g.untrack(l)
	defer g.detach(l)
	in := &budgetReader{r: c}
	br := bufio.NewReaderSize(in, readAhead)
	for {
		in.left = maxHeaderBytes
		_ = c.SetReadDeadline(time.Now().Add(g.cfg.RequestTimeout))
		req, err := http.ReadRequest(br)
		if err != nil {
			if errors.Is(err, errHeaderTooLarge) {
				refuse(c, http.StatusRequestHeaderFieldsTooLarge, "paddock egress: the request's headers are larger than 64 KiB")
			}
			return
		}
		in.left = -1
		_ = c.SetReadDeadline(time.Time{})
		if req.Method == http.MethodConnect {
			g.tunnel(l, br, req)
			return
		}
		if !g.forward(l, br, req) {
			return
		}
	}
}

// tunnel answers CONNECT host:port: allowed, a byte stream both ways
// until either side ends it; otherwise a refusal.
func (g *Gate) tunnel(l *link, br *bufio.Reader, req *http.Request) {
	host, port, err := net.SplitHostPort(req.Host)
	if err != nil || port == "" {
		refuse(l.client, http.StatusBadRequest, "paddock egress: CONNECT needs host:port, not "+strconv.Quote(req.Host))
		return
	}
	if ok, why := g.decide(l, host); !ok {
		refuse(l.client, http.StatusForbidden, why)
		return
	}
	up, err := g.connect(host, port)
	if err != nil {
		refuse(l.client, http.StatusBadGateway, "paddock egress: "+err.Error())
		return
	}
	if !g.attach(l, up) {
		return
	}
	if _, err := io.WriteString(l.client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	splice(l.client, br, up)
}

// forward answers one plain-HTTP request for an absolute URL: allowed,
// sent on (origin form, one connection per request) and its response
// passed back; false when the client connection is done with.
func (g *Gate) forward(l *link, br *bufio.Reader, req *http.Request) bool {
	if req.URL.Host == "" || req.URL.Scheme != "http" {
		refuse(l.client, http.StatusBadRequest, "paddock egress: this is a proxy; ask it for an absolute http:// URL, or CONNECT host:port")
		return false
	}
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = "80"
	}
	if ok, why := g.decide(l, host); !ok {
		refuse(l.client, http.StatusForbidden, why)
		return false
	}
	up, err := g.connect(host, port)
	if err != nil {
		refuse(l.client, http.StatusBadGateway, "paddock egress: "+err.Error())
		return false
	}
	if !g.attach(l, up) {
		return false
	}
	defer g.detach(l)
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	keep := !req.Close
	req.Close = true // one upstream connection per request
	if err := req.Write(up); err != nil {
		refuse(l.client, http.StatusBadGateway, "paddock egress: sending the request: "+err.Error())
		return false
	}
	upr := bufio.NewReader(up)
	res, err := http.ReadResponse(upr, req)
	if err != nil {
		refuse(l.client, http.StatusBadGateway, "paddock egress: reading the response: "+err.Error())
		return false
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusSwitchingProtocols {
		if err := res.Write(l.client); err != nil {
			return false
		}
		splice(l.client, br, &bufferedConn{Conn: up, r: upr})
		return false
	}
	res.Close = res.Close || !keep || res.ContentLength < 0 && len(res.TransferEncoding) == 0
	if err := res.Write(l.client); err != nil {
		return false
	}
	return !res.Close
}

// connect resolves an allowed name and connects to its first address
// that answers, within the dial timeout.
func (g *Gate) connect(host, port string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.DialTimeout)
	defer cancel()
	addrs, err := g.cfg.Resolve(ctx, host)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no addresses")
	}
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", host, err)
	}
	var last error = fmt.Errorf("%s resolves only to addresses a sandbox may not reach (this machine's loopback, link-local or unspecified)", host)
	for _, a := range addrs {
		if a = a.Unmap(); hostOnly(a) {
			continue
		}
		c, err := g.cfg.Dial(ctx, "tcp", net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, fmt.Errorf("connecting to %s: %w", host, last)
}

// hostOnly reports whether a is an address that would reach this
// machine, or its link, rather than the network: an allowed name that
// resolves there (by mistake, or by rebinding) must not open the host's
// own services (or a cloud's metadata service) to the sandbox.
func hostOnly(a netip.Addr) bool {
	return a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast()
}

// refuse answers status with a text naming why, and no more.
func refuse(c net.Conn, status int, why string) {
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nX-Paddock-Egress: refused\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s\n",
		status, http.StatusText(status), len(why)+1, why)
}

// splice copies both ways between the client (whose reader may hold
// bytes it sent already) and up, passing each side's end of writing on,
// until both directions have ended.
func splice(client net.Conn, fromClient *bufio.Reader, up net.Conn) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := io.Copy(up, fromClient)
		halfClose(up, err)
	}()
	_, err := io.Copy(client, up)
	halfClose(client, err)
	if err != nil {
		_ = up.Close()
	}
	<-done
}

// halfClose ends c's writing after a clean end of its input, or closes c
// after a failure.
func halfClose(c net.Conn, err error) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok && err == nil {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

var errHeaderTooLarge = errors.New("request header too large")

// budgetReader reads from r, failing once left bytes are spent (left < 0:
// no limit), to bound a request's headers.
type budgetReader struct {
	r    io.Reader
	left int
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, errHeaderTooLarge
	}
	if b.left > 0 && len(p) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	if b.left > 0 {
		b.left -= n
	}
	return n, err
}

// bufferedConn is a connection whose reads come first from what r holds.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}
