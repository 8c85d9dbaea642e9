package docker_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/docker"
	"github.com/paddockhq/paddock/adapters/docker/dockertest"
	"github.com/paddockhq/paddock/adapters/internal/egress/egresstest"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/require"
)

// loadTurns is the load case's concurrency here: each turn is a container
// of its own, and a 2-core machine runs a few dozen at once.
const loadTurns = 40

// suiteConfig is the suite on shell fixtures; the dropped command kills its
// session's runner, so no exit is ever recorded. With in, its
// network-policy case watches the policy at work on that test internet
// (curl through the sandbox's proxy: the adapter needs the tools image).
func suiteConfig(a paddock.Adapter, in *egresstest.Internet) conformance.Config {
	cfg := conformance.Config{Adapter: a, Fixtures: conformance.WrappedShellFixtures(),
		PreviewProbe: conformance.ProbePreviewHTTP, Load: conformance.Load{Turns: loadTurns}}
	if in != nil {
		cfg.Egress = conformance.CurlEgress(in.CAPEM, "*.pkg.test", "https://api.pkg.test/", "https://denied.test/", "hello from api.pkg.test")
	}
	return cfg
}

// withInternet puts the adapter on the tools image, its sandboxes'
// proxies going to the test internet in.
func withInternet(t testing.TB, in *egresstest.Internet) func(*docker.Config) {
	image := dockertest.Tools(t)
	return func(c *docker.Config) {
		c.Image, c.Helpers = image, true
		c.Egress = docker.EgressConfig{Resolve: in.Resolve, Dial: in.Dial}
	}
}

// startRuntime starts a runtime over a, shut down when the test ends.
func startRuntime(t *testing.T, a paddock.Adapter) *actors.Runtime {
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderDocker: a}, ReapInterval: -1})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
	})
	return rt
}

// newPreviewAdapter returns an adapter whose preview proxy is served on a
// loopback server (PreviewBaseURL points at it).
func newPreviewAdapter(t testing.TB, edit ...func(*docker.Config)) *docker.Adapter {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	a := newAdapter(t, append([]func(*docker.Config){func(c *docker.Config) {
		c.PreviewBaseURL = srv.URL
		c.PreviewKey = []byte("a test key that is long enough to sign previews")
	}}, edit...)...)
	mux.Handle("/preview/", a.Previews())
	return a
}

func TestConformance(t *testing.T) {
	t.Parallel()
	in := egresstest.New(t)
	a := newPreviewAdapter(t, withInternet(t, in))
	cfg := suiteConfig(a, in)
	cfg.Except = []string{conformance.LoadCase} // run through the runtime, which calls the adapter as the raw case does
	conformance.Run(t, cfg)
}

// An ordinary image passes too: one shaped like a distro's, whose
// /tmp, /workspace (root's, 0755, holding a project file), /home, /var
// and non-root user the scratch mounts and the sandbox user must live
// with. It has no paddock-watch, so it is proven without watch.
func TestConformanceOnADistroShapedImage(t *testing.T) {
	t.Parallel()
	a := newPreviewAdapter(t, func(c *docker.Config) { c.Image = dockertest.DistroImage; c.Helpers = false })
	cfg := suiteConfig(a, nil)
	cfg.Except = []string{conformance.LoadCase, "36", "37"} // the image changes nothing of them
	conformance.Run(t, cfg)
}

func TestConformanceThroughTheRuntime(t *testing.T) {
	t.Parallel()
	in := egresstest.New(t)
	rt := startRuntime(t, newPreviewAdapter(t, withInternet(t, in)))
	conformance.RunRuntime(t, rt, paddock.ProviderDocker, suiteConfig(nil, in))
}

// Under gVisor the network-policy and checkpoint cases hold too, raw and
// through the runtime: its netstack, not the host's, is what the relay
// listens in, and its own filesystem what tar reads and writes.
func TestConformanceUnderRunsc(t *testing.T) {
	t.Parallel()
	in := egresstest.New(t)
	a := newAdapter(t, withInternet(t, in), func(c *docker.Config) { c.Runtime, c.MaxProcesses = docker.RuntimeRunsc, 1024 })
	runscSandbox(t, a, "runsc-probe") // skips without runsc
	cfg := suiteConfig(a, in)
	cfg.Cases = []string{"19", "20", "36", "37"}
	t.Run("raw", func(t *testing.T) {
		t.Parallel()
		conformance.Run(t, cfg)
	})
	t.Run("runtime", func(t *testing.T) {
		t.Parallel()
		through := cfg
		through.Adapter = nil
		conformance.RunRuntime(t, startRuntime(t, a), paddock.ProviderDocker, through)
	})
}

// wsServer answers a WebSocket handshake and sends one text frame, with
// only busybox: the accept key by sha1sum and base64.
const wsServer = `key=
while read -r line; do
  line=$(printf '%s' "$line" | tr -d '\r')
  [ -z "$line" ] && break
  case "$(printf '%s' "$line" | tr A-Z a-z)" in sec-websocket-key:*) key=${line#*: };; esac
done
acc=$(printf '%s' "${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11" | sha1sum | cut -c1-40 | sed 's/../\\x&/g')
acc=$(printf "$acc" | base64)
printf 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n' "$acc"
printf '\201\022hello from sandbox'
sleep 1
`

func status(t *testing.T, method, u string, auth string, cookies ...*http.Cookie) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// Previews reach servers inside a sandbox that has no network, only with
// a valid header token (or the bootstrap cookie), and stop at once when
// revoked or expired.
func TestExposeReachesANoNetworkSandbox(t *testing.T) {
	t.Parallel()
	a := newPreviewAdapter(t)
	h := sandbox(t, a, "previews", nil)
	ctx := ctxFor(t, 2*time.Minute)
	require.NoError(t, a.WriteFile(ctx, h, "/workspace/www/index.html", 0o644, strings.NewReader("hello preview\n")))
	require.NoError(t, a.WriteFile(ctx, h, "/workspace/ws.sh", 0o644, strings.NewReader(wsServer)))
	for _, cmd := range []paddock.Cmd{
		paddock.NewCmd("httpd", "-f", "-p", "127.0.0.1:8080", "-h", "/workspace/www"),
		paddock.NewCmd("nc", "-ll", "-p", "8081", "-e", "sh", "/workspace/ws.sh"),
	} {
		st, err := a.Spawn(ctx, h, cmd, paddock.SpawnOpts{})
		require.NoError(t, err)
		require.NoError(t, st.Close()) // the servers run on, detached
	}
	require.Eventually(t, func() bool {
		out, code := execOut(t, a, h, "wget", "-Y", "off", "-q", "-O", "-", "http://127.0.0.1:8080/") // busybox wget ignores NO_PROXY
		return code == 0 && out == "hello preview\n"
	}, time.Minute, 100*time.Millisecond)
	out, _ := execOut(t, a, h, "ls", "/sys/class/net")
	require.Equal(t, "lo\n", out, "no network but loopback")

	p, err := paddock.Expose(ctx, a, h, 8080, paddock.ExposeOpts{TTL: time.Minute})
	require.NoError(t, err)
	require.NotContains(t, p.URL, p.Token.Reveal())
	code, body := status(t, http.MethodGet, p.URL, p.Token.Reveal())
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "hello preview\n", body)

	other, err := paddock.Expose(ctx, a, h, 8081, paddock.ExposeOpts{TTL: time.Minute})
	require.NoError(t, err)
	short, err := paddock.Expose(ctx, a, h, 8080, paddock.ExposeOpts{TTL: time.Second})
	require.NoError(t, err)
	time.Sleep(1100 * time.Millisecond)
	for name, c := range map[string]struct{ url, token string }{
		"no token":             {p.URL, ""},
		"the token in a query": {p.URL + "?token=" + url.QueryEscape(p.Token.Reveal()), ""},
		"a wrong port":         {strings.Replace(p.URL, "/8080/", "/8081/", 1), p.Token.Reveal()},
		"another port's token": {p.URL, other.Token.Reveal()},
		"an expired token":     {short.URL, short.Token.Reveal()},
		"another sandbox":      {strings.Replace(p.URL, "/previews/", "/others/", 1), p.Token.Reveal()},
	} {
		code, body := status(t, http.MethodGet, c.url, c.token)
		require.Equal(t, http.StatusUnauthorized, code, name)
		require.NotContains(t, body, "hello", name)
	}

	require.NoError(t, paddock.Revoke(ctx, a, h, p))
	code, _ = status(t, http.MethodGet, p.URL, p.Token.Reveal())
	require.Equal(t, http.StatusUnauthorized, code, "revoked at once")
	require.ErrorIs(t, paddock.Revoke(ctx, a, a.BuildHandle("others"), other), paddock.ErrInvalid)

	t.Run("the bootstrap cookie carries a WebSocket upgrade", func(t *testing.T) {
		link, err := a.PreviewBootstrap(h, other)
		require.NoError(t, err)
		base, err := url.Parse(other.URL)
		require.NoError(t, err)
		jar, _ := cookiejar.New(nil)
		browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := browser.Get(base.Scheme + "://" + base.Host + link)
		require.NoError(t, err)
		_ = res.Body.Close()
		require.Equal(t, http.StatusSeeOther, res.StatusCode)
		cookies := jar.Cookies(base)
		require.Len(t, cookies, 1)
		require.True(t, res.Cookies()[0].HttpOnly)

		wsURL := "ws" + strings.TrimPrefix(other.URL, "http") + "socket"
		conn, _, err := websocket.DefaultDialer.Dial(wsURL, http.Header{"Cookie": {cookies[0].Name + "=" + cookies[0].Value}})
		require.NoError(t, err)
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		kind, msg, err := conn.ReadMessage()
		require.NoError(t, err)
		require.Equal(t, websocket.TextMessage, kind)
		require.Equal(t, "hello from sandbox", string(msg))
		require.NoError(t, conn.Close())

		_, res, err = websocket.DefaultDialer.Dial(wsURL, nil)
		require.Error(t, err)
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, "without the cookie")
	})

	_, err = paddock.Expose(ctx, a, a.BuildHandle("never-made"), 8080, paddock.ExposeOpts{})
	require.ErrorIs(t, err, paddock.ErrNotFound)
	_, err = paddock.Expose(ctx, newAdapter(t), h, 8080, paddock.ExposeOpts{})
	require.ErrorIs(t, err, paddock.ErrInvalid, "no preview base URL: nothing would serve it")
}
