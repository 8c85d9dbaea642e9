package egress_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/adapters/internal/egress"
	"github.com/paddockhq/paddock/adapters/internal/egress/egresstest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// served is a Gate for allow on the test internet, listening on loopback,
// and its address; both end with the test.
func served(t *testing.T, in *egresstest.Internet, allow []string, tune ...func(*egress.Config)) (*egress.Gate, string) {
	t.Helper()
	cfg := egress.Config{Resolve: in.Resolve, Dial: in.Dial}
	for _, f := range tune {
		f(&cfg)
	}
	g := egress.New(cfg, allow)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- g.Serve(l) }()
	t.Cleanup(func() {
		_ = l.Close()
		require.NoError(t, <-done)
		g.Close()
	})
	return g, l.Addr().String()
}

// client is an HTTP client that goes through the proxy at addr and trusts
// the test internet's authority.
func client(t *testing.T, in *egresstest.Internet, addr string) *http.Client {
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(in.CAPEM))
	proxy, err := url.Parse("http://" + addr)
	require.NoError(t, err)
	tr := &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: time.Minute}
}

// connect sends a raw CONNECT for target and answers the proxy's status
// line and body (for a refusal), with the connection left open for a
// tunnel.
func connect(t *testing.T, addr, target string) (status int, body string, conn net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	require.NoError(t, err)
	if res.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(data), c
	}
	return res.StatusCode, "", c
}

// The policy decides by name, for HTTPS (CONNECT) and plain HTTP alike: an
// allowed name passes, a wildcard matches the names under it and not its
// apex, anything else, IP literals included, is refused at once with
// words that name the policy; an empty list refuses everything.
func TestThePolicyDecidesByName(t *testing.T) {
	t.Parallel()
	in := egresstest.New(t)
	var allowed, denied atomic.Int32
	_, addr := served(t, in, []string{"pkg.test", "*.api.pkg.test", "GIT.test"}, func(c *egress.Config) {
		c.Verdict = func(ok bool) {
			if ok {
				allowed.Add(1)
			} else {
				denied.Add(1)
			}
		}
	})
	hc := client(t, in, addr)
	for _, u := range []string{"https://pkg.test/", "http://pkg.test/", "https://deep.api.pkg.test/", "https://git.test/", "https://PKG.test./"} {
		res, err := hc.Get(u)
		require.NoError(t, err, u)
		data, _ := io.ReadAll(res.Body)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, u)
		assert.True(t, strings.HasPrefix(string(data), "hello from "), "%s: %s", u, data)
	}
	for _, tc := range []struct{ target, why string }{
		{"denied.test:443", "denied.test is not in this sandbox's allow list"},
		{"api.pkg.test:443", "api.pkg.test is not in this sandbox's allow list"}, // the wildcard's apex
		{"192.0.2.10:443", "192.0.2.10 is an IP address"},
		{"[2001:db8::1]:443", "2001:db8::1 is an IP address"},
		{"[::1]:443", "::1 is the sandbox's own loopback"},
		{"127.0.0.1:8080", "127.0.0.1 is the sandbox's own loopback"},
		{"LocalHost:80", "LocalHost is the sandbox's own loopback"},
		{"unknown.test:443", "unknown.test is not in this sandbox's allow list"},
	} {
		status, body, _ := connect(t, addr, tc.target)
		assert.Equal(t, http.StatusForbidden, status, tc.target)
		assert.Contains(t, body, "paddock egress policy: "+tc.why, tc.target)
	}
	res, err := hc.Get("http://denied.test/")
	require.NoError(t, err)
	data, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusForbidden, res.StatusCode)
	assert.Equal(t, "refused", res.Header.Get("X-Paddock-Egress"))
	assert.Contains(t, string(data), "denied.test is not in this sandbox's allow list")
	assert.EqualValues(t, 5, allowed.Load())
	assert.EqualValues(t, 9, denied.Load())

	_, none := served(t, in, nil)
	status, body, _ := connect(t, none, "pkg.test:443")
	assert.Equal(t, http.StatusForbidden, status)
	assert.Contains(t, body, "allow list is empty")
}

// What is not a proxy request is refused with a reason, and a client that
// says nothing is let go: an origin-form request, a CONNECT without a
// port, headers past the bound, silence past the request timeout, a name
// that does not resolve (502), and one connection past the limit (503).
func TestBadRequestsAreRefused(t *testing.T) {
	t.Parallel()
	in := egresstest.New(t)
	g, addr := served(t, in, []string{"pkg.test", "unknown.test"}, func(c *egress.Config) { c.MaxConns = 2 })
	raw := func(request string) (int, string) {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		_, _ = io.WriteString(c, request)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, request[:min(len(request), 40)])
		data, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(data)
	}
	status, body := raw("GET / HTTP/1.1\r\nHost: pkg.test\r\n\r\n")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "this is a proxy")
	status, body = raw("CONNECT pkg.test HTTP/1.1\r\nHost: pkg.test\r\n\r\n")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "CONNECT needs host:port")
	status, _ = raw("CONNECT pkg.test:443 HTTP/1.1\r\nX-Big: " + strings.Repeat("a", 80<<10) + "\r\n\r\n")
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, status)
	status, body = raw("CONNECT unknown.test:443 HTTP/1.1\r\n\r\n")
	assert.Equal(t, http.StatusBadGateway, status)
	assert.Contains(t, body, "resolving unknown.test")
	_, local := served(t, in, []string{"home.test"}, func(c *egress.Config) {
		c.Resolve = func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::ffff:169.254.169.254"), netip.MustParseAddr("::")}, nil
		}
		c.Dial = func(context.Context, string, string) (net.Conn, error) {
			t.Error("an address of this machine or its link was dialled")
			return nil, errors.New("dialled")
		}
	})
	status, body, _ = connect(t, local, "home.test:443")
	assert.Equal(t, http.StatusBadGateway, status, "a name resolving to loopback or link-local is not followed")
	assert.Contains(t, body, "resolves only to addresses a sandbox may not reach")
	status, body = raw("CONNECT pkg.test:25 HTTP/1.1\r\n\r\n")
	assert.Equal(t, http.StatusBadGateway, status, "nothing listens there")
	assert.Contains(t, body, "connecting to pkg.test")

	// Silence is judged on a gate of its own: with a request timeout this
	// short, a busy machine could delay the requests above past it.
	_, quiet := served(t, in, nil, func(c *egress.Config) { c.RequestTimeout = 200 * time.Millisecond })
	silent, err := net.Dial("tcp", quiet)
	require.NoError(t, err)
	defer silent.Close()
	_ = silent.SetReadDeadline(time.Now().Add(time.Minute)) // a hang bound, not the verdict
	_, err = silent.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "a silent client is closed after the request timeout")

	// The refused connections above are let go once answered; the limit
	// counts from none.
	require.Eventually(t, func() bool { return g.Open() == 0 }, time.Minute, 10*time.Millisecond)
	status1, _, c1 := connect(t, addr, "pkg.test:443")
	status2, _, c2 := connect(t, addr, "pkg.test:443")
	require.Equal(t, http.StatusOK, status1)
	require.Equal(t, http.StatusOK, status2)
	status, body = raw("CONNECT pkg.test:443 HTTP/1.1\r\n\r\n")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Contains(t, body, "2 connections open, the most it may")
	require.NoError(t, c1.Close())
	require.NoError(t, c2.Close())
	require.Eventually(t, func() bool { return g.Open() == 0 }, time.Minute, 10*time.Millisecond)
}

// A policy changed live cuts the open connections to the names it no
// longer allows, and only those; new ones are decided by it.
func TestALiveChangeCutsConnections(t *testing.T) {
	t.Parallel()
	in := egresstest.New(t)
	g, addr := served(t, in, []string{"pkg.test", "git.test"})
	_, _, kept := connect(t, addr, "git.test:443")
	_, _, doomed := connect(t, addr, "pkg.test:443")
	g.SetPolicy([]string{"git.test"})
	_ = doomed.SetReadDeadline(time.Now().Add(time.Minute)) // a hang bound
	_, err := doomed.Read(make([]byte, 1))
	requireCut(t, err, "the tunnel to a name no longer allowed is cut")

	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(in.CAPEM))
	tc := tls.Client(kept, &tls.Config{ServerName: "git.test", RootCAs: pool})
	require.NoError(t, tc.Handshake(), "the tunnel to a name still allowed works")
	status, _, _ := connect(t, addr, "pkg.test:443")
	assert.Equal(t, http.StatusForbidden, status)
	g.SetPolicy(nil)
	_ = kept.SetReadDeadline(time.Now().Add(time.Minute))
	_, err = tc.Read(make([]byte, 1))
	requireCut(t, err, "an empty list cuts everything")
}

// requireCut checks a read ended because the connection was cut, not
// because the hang bound ran out.
func requireCut(t *testing.T, err error, what string) {
	t.Helper()
	require.Error(t, err, what)
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "%s, not timed out: %v", what, err)
}

// Tools pass through it: git clones a repository over HTTPS by the
// proxy, as an agent's sandbox would, and is refused a name not allowed.
func TestGitClonesThroughTheGate(t *testing.T) {
	t.Parallel()
	adaptertest.NeedsTools(t, "git")
	in := egresstest.New(t)
	_, addr := served(t, in, []string{"git.test"})
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(ca, in.CAPEM, 0o644))
	clone := func(from, to string) ([]byte, error) {
		cmd := exec.Command("git", "clone", "-q", from, to)
		cmd.Env = append(os.Environ(), "https_proxy=http://"+addr, "GIT_SSL_CAINFO="+ca, "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_TERMINAL_PROMPT=0")
		return cmd.CombinedOutput()
	}
	out, err := clone("https://git.test"+in.RepoPath, filepath.Join(dir, "ok"))
	require.NoError(t, err, string(out))
	data, err := os.ReadFile(filepath.Join(dir, "ok", "README"))
	require.NoError(t, err)
	assert.Equal(t, egresstest.RepoContent, string(data))
	out, err = clone("https://denied.test"+in.RepoPath, filepath.Join(dir, "no"))
	require.Error(t, err)
	assert.Contains(t, string(out), "403")
}
