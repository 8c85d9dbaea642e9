package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpcreflect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/remote/remotetest"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/daemon"
	"github.com/paddockhq/paddock/internal/syncbuf"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/reflect/protoreflect"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start runs paddockd with args until the test ends and returns its
// address and log.
func start(t *testing.T, args ...string) (string, *syncbuf.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan int, 1)
	log := &syncbuf.Buffer{}
	env := map[string]string{"DOCKER_HOST": "unix:///nonexistent/docker.sock"} // no engine: local and fake
	args = append([]string{"-listen", "127.0.0.1:0", "-root", t.TempDir(), "-log-level", "info"}, args...)
	go func() {
		done <- run(ctx, args, func(k string) string { return env[k] }, log, func(a string) { addr <- a })
	}()
	select {
	case a := <-addr:
		t.Cleanup(func() {
			cancel()
			require.Equal(t, 0, <-done, "a stop is a clean exit: %s", log)
		})
		return a, log
	case code := <-done:
		cancel()
		t.Fatalf("paddockd exited %d: %s", code, log)
	}
	return "", nil
}

// h2c is an HTTP/2 client without TLS, as loopback paddockd speaks.
func h2c() *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: tr}
}

// paddockd serves the runtime over its providers to a client bearing one
// of its tokens: sandboxes, commands and files; a wrong or missing token is
// denied; the health service answers; the token is never logged; a stop is
// clean.
func TestServesTheRuntimeToTokenBearers(t *testing.T) {
	t.Parallel()
	tokens := filepath.Join(t.TempDir(), "tokens")
	const token = "pdk-secret-token-0123456789"
	require.NoError(t, os.WriteFile(tokens, []byte("# who may call\n"+token+"\nacme acme-"+token+"\n"), 0o600))
	addr, log := start(t, "-tokens-file", tokens)
	hc := h2c()
	defer hc.CloseIdleConnections()
	tr, err := daemon.Dial("http://"+addr, daemon.DialOptions{HTTPClient: hc, Token: paddock.NewSecret(token)})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, p := range []paddock.Provider{paddock.ProviderFake, paddock.ProviderLocal} {
		a := client.New(tr, p)
		h, err := a.Create(ctx, "daemon-box", paddock.CreateOpts{})
		require.NoError(t, err, p)
		cmd := paddock.NewCmd("sh", "-c", "echo hello")
		if p == paddock.ProviderFake {
			cmd = paddock.NewCmd("script", "out:hello\n")
		}
		res, err := a.Exec(ctx, h, cmd, paddock.ExecOpts{})
		require.NoError(t, err, p)
		require.Equal(t, "hello\n", string(res.Stdout), p)
		content := bytes.Repeat([]byte("paddockd "), 100_000) // 900 kB in chunks each way
		require.NoError(t, a.WriteFile(ctx, h, "/tmp/daemon.txt", 0o644, bytes.NewReader(content)), p)
		rc, err := a.ReadFile(ctx, h, "/tmp/daemon.txt")
		require.NoError(t, err, p)
		got, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		require.Equal(t, content, got, p)
		require.NoError(t, a.Destroy(ctx, h), p)
	}

	// A tenant's token: its sandbox is its own, prefixed at the provider.
	acmeT, err := daemon.Dial("http://"+addr, daemon.DialOptions{HTTPClient: hc, Token: paddock.NewSecret("acme-" + token)})
	require.NoError(t, err)
	acme := client.New(acmeT, paddock.ProviderFake)
	_, err = acme.Create(ctx, "mine", paddock.CreateOpts{})
	require.NoError(t, err)
	names, err := acme.ListAllNames(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"mine"}, names)
	names, err = client.New(tr, paddock.ProviderFake).ListAllNames(ctx)
	require.NoError(t, err)
	require.Contains(t, names, "acme-mine")

	for _, wrong := range []paddock.Secret{paddock.NewSecret("not-the-token"), {}} {
		bad, err := daemon.Dial("http://"+addr, daemon.DialOptions{HTTPClient: hc, Token: wrong})
		require.NoError(t, err)
		_, err = client.New(bad, paddock.ProviderFake).Create(ctx, "nope", paddock.CreateOpts{})
		require.ErrorIs(t, err, paddock.ErrDenied)
	}

	res, err := hc.Post("http://"+addr+"/grpc.health.v1.Health/Check", "application/json",
		strings.NewReader(`{"service":"`+daemon.ServiceName+`"}`))
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, string(body))
	require.Contains(t, string(body), "SERVING")
	// Reflection lists the service (gRPC's, by its own client).
	refl := grpcreflect.NewClient(hc, "http://"+addr, connect.WithGRPC()).NewStream(ctx)
	services, err := refl.ListServices()
	require.NoError(t, err)
	_, _ = refl.Close()
	require.Contains(t, services, protoreflect.FullName(daemon.ServiceName))
	require.Contains(t, log.String(), `"serving"`)
	require.NotContains(t, log.String(), token, "no token is ever logged")
}

// Beyond loopback paddockd needs TLS and tokens; it refuses to start
// without them, and a half-configured TLS is refused anywhere.
func TestRefusesWhatItCannotServeSafely(t *testing.T) {
	t.Parallel()
	tokens := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(tokens, []byte("t\n"), 0o600))
	badTenant := filepath.Join(t.TempDir(), "bad")
	require.NoError(t, os.WriteFile(badTenant, []byte("Not-A-Tenant tok\n"), 0o600))
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, []byte("# none\n"), 0o600))
	for _, args := range [][]string{
		{"-listen", "0.0.0.0:0"},
		{"-listen", ":0", "-tokens-file", tokens},
		{"-listen", "192.0.2.1:0", "-tls-cert", "c.pem", "-tls-key", "k.pem"},
		{"-listen", "127.0.0.1:0", "-tls-cert", "c.pem"},
		{"-listen", "127.0.0.1:0", "-tokens-file", empty},
		{"-listen", "127.0.0.1:0", "-log-level", "loud"},
		{"-listen", "127.0.0.1:0", "-client-ca", "ca.pem"},
		{"-listen", "127.0.0.1:0", "-client-ca", "ca.pem", "-tls-cert", "c.pem", "-tls-key", "k.pem", "-tokens-file", tokens},
		{"-listen", "127.0.0.1:0", "-tokens-file", badTenant},
	} {
		var out syncbuf.Buffer
		code := run(context.Background(), append(args, "-root", t.TempDir()), func(string) string { return "" }, &out, nil)
		require.Equal(t, 2, code, "%v: %s", args, out.String())
		require.Contains(t, out.String(), "paddockd", "%v says why", args)
	}
	require.True(t, loopback("localhost:1"))
	require.True(t, loopback("[::1]:1"))
	require.False(t, loopback(":1"))
}

// bearerRT adds a bearer token to every request.
type bearerRT struct {
	token string
	next  http.RoundTripper
}

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// An agent reaches the MCP tools at /mcp with a token without a tenant
// (the official Go SDK's client over streamable HTTP); a tenant's token
// is refused there, since the tools see every sandbox.
func TestServesMCPOverHTTP(t *testing.T) {
	t.Parallel()
	tokens := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(tokens, []byte("operator-token\nacme acme-token\n"), 0o600))
	addr, _ := start(t, "-tokens-file", tokens)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connect := func(token string) (*mcp.ClientSession, error) {
		hc := &http.Client{Transport: bearerRT{token: token, next: http.DefaultTransport}}
		return mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "test"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: hc}, nil)
	}
	cs, err := connect("operator-token")
	require.NoError(t, err)
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 8)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_sandbox", Arguments: map[string]any{"name": "mcp-box", "provider": "fake"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	for _, token := range []string{"acme-token", "wrong"} {
		_, err = connect(token)
		require.Error(t, err, token)
	}
}

// `paddockd mcp` serves the tools over stdio, for an agent that starts
// it.
func TestServesMCPOverStdio(t *testing.T) {
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	stdio = &mcp.IOTransport{Reader: toServer, Writer: fromServer}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var log syncbuf.Buffer
	go func() {
		done <- run(ctx, []string{"mcp", "-root", t.TempDir()}, func(k string) string {
			return map[string]string{"DOCKER_HOST": "unix:///nonexistent/docker.sock"}[k]
		}, &log, nil)
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "test"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	require.NoError(t, err)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_sandbox", Arguments: map[string]any{"name": "stdio-box", "provider": "fake"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	require.NoError(t, cs.Close())
	cancel()
	require.Equal(t, 0, <-done, "%s", log.String())
}

// writePEM writes cert (and its key, when keyPath is set) as PEM files.
func writePEM(t *testing.T, cert tls.Certificate, certPath, keyPath string) {
	t.Helper()
	require.NoError(t, os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600))
	if keyPath != "" {
		der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))
	}
}

// With -client-ca, paddockd speaks mutual TLS: each client certificate's
// common name is its tenant (one sees only its own sandboxes); a client
// without a certificate of that authority is not served.
func TestClientCertificatesNameTenants(t *testing.T) {
	t.Parallel()
	ca, err := remotetest.NewAuthority("paddockd test CA")
	require.NoError(t, err)
	dir := t.TempDir()
	server, err := ca.Issue("127.0.0.1")
	require.NoError(t, err)
	writePEM(t, server, filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw}), 0o600))
	addr, _ := start(t, "-tls-cert", filepath.Join(dir, "server.pem"), "-tls-key", filepath.Join(dir, "server.key"), "-client-ca", filepath.Join(dir, "ca.pem"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	as := func(certs ...tls.Certificate) (*client.Client, *http.Client) {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, Certificates: certs}, ForceAttemptHTTP2: true}
		hc := &http.Client{Transport: tr}
		t.Cleanup(tr.CloseIdleConnections)
		d, err := daemon.Dial("https://"+addr, daemon.DialOptions{HTTPClient: hc})
		require.NoError(t, err)
		return client.New(d, paddock.ProviderFake), hc
	}
	acmeCert, err := ca.IssueNamed("acme")
	require.NoError(t, err)
	globexCert, err := ca.IssueNamed("globex")
	require.NoError(t, err)
	acme, _ := as(acmeCert)
	globex, _ := as(globexCert)
	_, err = acme.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	names, err := acme.ListAllNames(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"box"}, names)
	names, err = globex.ListAllNames(ctx)
	require.NoError(t, err)
	require.Empty(t, names, "another tenant's sandbox is not listed")

	unnamed, err := ca.Issue() // its common name, "paddock node", names no tenant
	require.NoError(t, err)
	anonymous, _ := as(unnamed)
	_, err = anonymous.ListAllNames(ctx)
	require.ErrorIs(t, err, paddock.ErrDenied, "a certificate naming no tenant is refused")

	nobody, _ := as()
	_, err = nobody.Create(ctx, "x", paddock.CreateOpts{})
	require.Error(t, err, "no certificate: not served")
	other, err := remotetest.NewAuthority("another CA")
	require.NoError(t, err)
	stranger, err := other.IssueNamed("acme")
	require.NoError(t, err)
	outsider, _ := as(stranger)
	_, err = outsider.ListAllNames(ctx)
	require.Error(t, err, "a certificate of another authority: not served")
}

// Settings come from the flags over the environment over a configuration
// file; a file's unknown setting or malformed line is refused, saying
// where.
func TestSettingsFromFlagsEnvironmentAndFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "paddockd.conf")
	require.NoError(t, os.WriteFile(file, []byte("# paddockd\nPADDOCKD_LISTEN = 127.0.0.1:9001\nPADDOCKD_LOG_LEVEL=debug\nPADDOCKD_ROOT=/srv/file\n"), 0o600))
	env := map[string]string{"PADDOCKD_LOG_LEVEL": "info"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		args                []string
		listen, level, root string
	}{
		{[]string{"-config", file}, "127.0.0.1:9001", "info", "/srv/file"},
		{[]string{"-config=" + file, "-root", "/srv/flag"}, "127.0.0.1:9001", "info", "/srv/flag"},
		{[]string{"-listen", "127.0.0.1:9002", "--config", file}, "127.0.0.1:9002", "info", "/srv/file"},
		{nil, "127.0.0.1:8423", "info", ""},
	} {
		var out syncbuf.Buffer
		c, err := parse(tc.args, getenv, &out)
		require.NoError(t, err, "%v: %s", tc.args, out.String())
		require.Equal(t, []string{tc.listen, tc.level, tc.root}, []string{c.listen, c.logLevel, c.root}, "%v", tc.args)
	}
	env["PADDOCKD_CONFIG"] = file
	c, err := parse(nil, getenv, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:9001", c.listen, "PADDOCKD_CONFIG names the file")

	for content, want := range map[string]string{
		"PADDOCKD_LISTN=127.0.0.1:1\n": "PADDOCKD_LISTN is not a setting",
		"LISTEN=127.0.0.1:1\n":         "LISTEN is not a setting",
		"PADDOCKD_LISTEN\n":            "line 1: want NAME=VALUE",
	} {
		bad := filepath.Join(dir, "bad.conf")
		require.NoError(t, os.WriteFile(bad, []byte(content), 0o600))
		_, err := parse([]string{"-config", bad}, func(string) string { return "" }, io.Discard)
		require.ErrorContains(t, err, want, content)
	}
	_, err = parse([]string{"-config", filepath.Join(dir, "absent")}, func(string) string { return "" }, io.Discard)
	require.ErrorContains(t, err, "-config")
}
