package preview

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSigner(t *testing.T) {
	t.Parallel()
	_, err := NewSigner(make([]byte, 31))
	require.Error(t, err, "a short key is refused")
	s, err := NewSigner([]byte(strings.Repeat("k", 32)))
	require.NoError(t, err)
	now := time.Unix(1_800_000_000, 0)
	s.now = func() time.Time { return now }

	tok, exp := s.Mint("box", 8080, time.Minute)
	require.Equal(t, now.Add(time.Minute), exp)
	got, err := s.Verify(tok, "box", 8080)
	require.NoError(t, err)
	require.Equal(t, exp.UnixNano(), got.UnixNano())
	other, _ := s.Mint("box", 8080, time.Minute)
	require.NotEqual(t, tok, other, "every token is unique")

	otherKey, _ := NewSigner([]byte(strings.Repeat("x", 32)))
	parts := strings.Split(tok, ".")
	for name, check := range map[string]func() error{
		"another sandbox": func() error { _, err := s.Verify(tok, "box2", 8080); return err },
		"another port":    func() error { _, err := s.Verify(tok, "box", 8081); return err },
		"another key":     func() error { _, err := otherKey.Verify(tok, "box", 8080); return err },
		"tampered payload": func() error {
			_, err := s.Verify(parts[0]+"."+strings.Replace(parts[1], "8080", "8081", 1)+"."+parts[2], "box", 8081)
			return err
		},
		"garbage":        func() error { _, err := s.Verify("nonsense", "box", 8080); return err },
		"wrong version":  func() error { _, err := s.Verify("pdk0."+parts[1]+"."+parts[2], "box", 8080); return err },
		"empty":          func() error { _, err := s.Verify("", "box", 8080); return err },
		"too many parts": func() error { _, err := s.Verify(tok+".x", "box", 8080); return err },
		"expired": func() error {
			now = now.Add(time.Minute)
			defer func() { now = now.Add(-time.Minute) }()
			_, err := s.Verify(tok, "box", 8080)
			return err
		},
	} {
		require.ErrorIs(t, check(), ErrInvalidToken, name)
	}
}

// upstream is a server standing in for the sandbox's port; dials counts
// how many connections the proxy opened to it.
type upstream struct {
	srv   *httptest.Server
	dials atomic.Int64
	seen  chan *http.Request
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{seen: make(chan *http.Request, 16)}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if websocket.IsWebSocketUpgrade(r) {
			up := websocket.Upgrader{}
			c, err := up.Upgrade(w, r, nil)
			if err != nil {
				return
			}
			defer c.Close()
			_, m, err := c.ReadMessage()
			if err == nil {
				_ = c.WriteMessage(websocket.TextMessage, append([]byte("echo:"), m...))
			}
			return
		}
		u.seen <- r.Clone(context.Background())
		_, _ = io.WriteString(w, "hello from "+r.URL.Path)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) dial(ctx context.Context, sandbox string, port int) (net.Conn, error) {
	u.dials.Add(1)
	if sandbox != "box" || port != 8080 {
		return nil, errors.New("no such port")
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", u.srv.Listener.Addr().String())
}

func newProxy(t *testing.T, u *upstream) (*Proxy, *Signer, *httptest.Server) {
	s := NewRandomSigner()
	p := NewProxy(Config{Signer: s, Dial: u.dial})
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	return p, s, front
}

func get(t *testing.T, url, auth string) (*http.Response, string) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	req.Header.Set("X-Forwarded-For", "10.0.0.1")
	req.AddCookie(&http.Cookie{Name: "app", Value: "kept"})
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestProxyForwardsOnlyValidTokens(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p, s, front := newProxy(t, u)
	tok, _ := s.Mint("box", 8080, time.Minute)
	base := front.URL + p.Path("box", 8080)

	res, body := get(t, base+"api/x?q=1", tok)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "hello from /api/x", body)
	seen := <-u.seen
	require.Empty(t, seen.Header.Get("Authorization"), "the sandbox never sees the token")
	require.Empty(t, seen.Header.Get("X-Forwarded-For"))
	require.Equal(t, "localhost", seen.Host)
	require.Equal(t, "q=1", seen.URL.RawQuery)
	c, err := seen.Cookie("app")
	require.NoError(t, err)
	require.Equal(t, "kept", c.Value)

	expired := func() string {
		old := s.now
		s.now = func() time.Time { return time.Now().Add(-2 * time.Minute) }
		defer func() { s.now = old }()
		tk, _ := s.Mint("box", 8080, time.Minute)
		return tk
	}()
	otherBox, _ := s.Mint("other", 8080, time.Minute)
	otherPort, _ := s.Mint("box", 9090, time.Minute)
	dials := u.dials.Load()
	for name, c := range map[string]struct{ url, auth string }{
		"no token":           {base, ""},
		"garbage":            {base, "garbage"},
		"another sandbox's":  {base, otherBox},
		"another port's":     {base, otherPort},
		"expired":            {base, expired},
		"in the query only":  {base + "?token=" + tok + "&access_token=" + tok, ""},
		"wrong port in path": {front.URL + p.Path("box", 9090), tok},
	} {
		res, body := get(t, c.url, c.auth)
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, name)
		require.NotContains(t, body, "hello", name)
	}
	res, _ = get(t, base, "")
	require.Equal(t, `Bearer realm="paddock-preview"`, res.Header.Get("WWW-Authenticate"))
	require.Equal(t, dials, u.dials.Load(), "a refused request dials nothing")

	for _, path := range []string{"/preview/", "/preview/box", "/preview/box/x/", "/preview/box/0/", "/preview/box/08080/", "/elsewhere/box/8080/"} {
		res, _ := get(t, front.URL+path, tok)
		require.Equal(t, http.StatusNotFound, res.StatusCode, path)
	}

	require.NoError(t, p.Revoke(tok, "box", 8080))
	res, _ = get(t, base, tok)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "revoked at once")
	require.ErrorIs(t, p.Revoke(otherBox, "box", 8080), ErrInvalidToken, "another's token cannot be revoked here")
	fresh, _ := s.Mint("box", 8080, time.Minute)
	res, _ = get(t, base, fresh)
	require.Equal(t, http.StatusOK, res.StatusCode, "other tokens for the port still work")
}

func TestProxyUnreachableIs502WithoutDetail(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	s := NewRandomSigner()
	p := NewProxy(Config{Signer: s, Dial: func(context.Context, string, int) (net.Conn, error) {
		return nil, errors.New("secret internal reason")
	}})
	front := httptest.NewServer(p)
	defer front.Close()
	_ = u
	tok, _ := s.Mint("box", 8080, time.Minute)
	res, body := get(t, front.URL+p.Path("box", 8080), tok)
	require.Equal(t, http.StatusBadGateway, res.StatusCode)
	require.NotContains(t, body, "secret")
}

func TestBootstrapCookieForBrowsersAndWebSockets(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	var active atomic.Int64
	s := NewRandomSigner()
	p := NewProxy(Config{Signer: s, Dial: u.dial, Activity: func(string) { active.Add(1) }})
	front := httptest.NewServer(p)
	defer front.Close()
	tok, _ := s.Mint("box", 8080, time.Minute)
	link, err := p.Bootstrap(tok, "box", 8080)
	require.NoError(t, err)
	require.NotContains(t, link, tok, "the link does not carry the token")

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	res, err := browser.Get(front.URL + link)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "hello from /", string(body), "redirected to the preview, authorised by the cookie")
	seen := <-u.seen
	_, err = seen.Cookie(CookieName)
	require.ErrorIs(t, err, http.ErrNoCookie, "the sandbox never sees the cookie")
	cookies := jar.Cookies(mustURL(front.URL + p.Path("box", 8080)))
	require.Len(t, cookies, 1)
	require.Empty(t, jar.Cookies(mustURL(front.URL+p.Path("box", 9090))), "the cookie is scoped to the preview")

	res, err = browser.Get(front.URL + link)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "a bootstrap link works once")

	// A WebSocket handshake cannot carry a header from a browser; the
	// cookie carries the credential.
	wsURL := "ws" + strings.TrimPrefix(front.URL, "http") + p.Path("box", 8080) + "socket"
	header := http.Header{"Cookie": {CookieName + "=" + cookies[0].Value}}
	conn, _, err := websocket.DefaultDialer.Dial(wsURL, header)
	require.NoError(t, err)
	require.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte("ping")))
	_, msg, err := conn.ReadMessage()
	require.NoError(t, err)
	require.Equal(t, "echo:ping", string(msg))
	require.NoError(t, conn.Close())
	_, res, err = websocket.DefaultDialer.Dial(wsURL, nil)
	require.Error(t, err)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "no cookie, no header: refused")
	require.Positive(t, active.Load(), "forwarded requests count as activity")

	require.NoError(t, p.Revoke(tok, "box", 8080))
	_, res, err = websocket.DefaultDialer.Dial(wsURL, header)
	require.Error(t, err)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "revoking the token ends the cookie too")
	_, err = p.Bootstrap(tok, "box", 8080)
	require.ErrorIs(t, err, ErrInvalidToken)
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// A browser sends a preview every cookie of this host, whatever the port:
// the console's, another preview's, any Paddock server's. None reaches the
// sandbox; its own cookies do. The bearer scheme is case-insensitive.
func TestProxyForwardsNoPaddockCookie(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p, s, front := newProxy(t, u)
	tok, _ := s.Mint("box", 8080, time.Minute)
	req, err := http.NewRequest(http.MethodGet, front.URL+p.Path("box", 8080), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "bearer "+tok)
	req.Header.Set("Cookie", "paddock_token=console-secret; app=kept; Paddock_Other=x; "+CookieName+"="+tok+"; theme=dark")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	seen := <-u.seen
	var names []string
	for _, c := range seen.Cookies() {
		names = append(names, c.Name+"="+c.Value)
	}
	assert.Equal(t, []string{"app=kept", "theme=dark"}, names)
	assert.NotContains(t, seen.Header.Get("Cookie"), "console-secret")
}
