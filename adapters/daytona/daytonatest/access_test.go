package daytonatest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Resize as the control plane decides it: a started sandbox only grows its
// cores and memory, a stopped one may grow its disk too, never past the
// per-sandbox limits, and the answer carries the new resources.
func TestResize(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	create(t, srv, "box")
	resize := func(body string) (int, map[string]any) {
		t.Helper()
		status, _, data := call(t, srv, http.MethodPost, "/api/sandbox/box/resize", []byte(body))
		return status, decode(t, data)
	}
	status, sb := resize(`{"cpu":2,"memory":4}`)
	require.Equal(t, http.StatusOK, status, sb)
	assert.Equal(t, []any{2.0, 4.0, 3.0}, []any{sb["cpu"], sb["memory"], sb["disk"]})
	for body, want := range map[string]string{
		`{}`:            "No resource changes specified - sandbox is already at the desired configuration",
		`{"cpu":2}`:     "No resource changes specified - sandbox is already at the desired configuration",
		`{"cpu":1}`:     "Sandbox must be in stopped state to decrease the number of CPU cores",
		`{"memory":2}`:  "Sandbox must be in stopped state to decrease memory",
		`{"disk":5}`:    "Disk resize can only be performed on a stopped sandbox",
		`{"cpu":5}`:     "CPU request 5 exceeds maximum allowed per sandbox (4).\nNeed higher resource limits per-sandbox? Contact us at support@daytona.io and let us know about your use case.",
		`{"memory":0}`:  "memory must not be less than 1",
		`{"cpu":"two"}`: "cpu must not be less than 1, cpu must be a number conforming to the specified constraints",
	} {
		status, out := resize(body)
		assert.Equal(t, http.StatusBadRequest, status, body)
		assert.Equal(t, want, out["message"], body)
	}
	status, _, _ = call(t, srv, http.MethodPost, "/api/sandbox/box/stop", nil)
	require.Equal(t, http.StatusOK, status)
	status, sb = resize(`{"cpu":1,"memory":1,"disk":10}`)
	require.Equal(t, http.StatusOK, status, sb)
	assert.Equal(t, []any{1.0, 1.0, 10.0}, []any{sb["cpu"], sb["memory"], sb["disk"]})
	status, out := resize(`{"disk":9}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "Sandbox disk size cannot be decreased", out["message"])
	status, out = resize(`{"disk":11}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, out["message"], "Disk request 11GB exceeds maximum allowed per sandbox (10GB).")
	status, _, _ = call(t, srv, http.MethodPost, "/api/sandbox/nope/resize", []byte(`{"cpu":2}`))
	assert.Equal(t, http.StatusNotFound, status)
}

// SSH access: a token per sandbox (a new one revokes the old), a command
// naming the gateway, revocation by token or all, and validation that only
// the gateway may ask.
func TestSSHAccess(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	create(t, srv, "box")
	status, _, data := call(t, srv, http.MethodPost, "/api/sandbox/box/ssh-access?expiresInMinutes=5", nil)
	require.Equal(t, http.StatusOK, status, string(data))
	first := decode(t, data)
	token, _ := first["token"].(string)
	assert.Regexp(t, `^[A-Za-z0-9]{32}$`, token)
	assert.Equal(t, "ssh -p 2222 "+token+"@localhost", first["sshCommand"])
	expires, err := time.Parse(time.RFC3339Nano, first["expiresAt"].(string))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now().Add(5*time.Minute), expires, time.Minute)
	id, valid := srv.SSHAccess(token)
	assert.True(t, valid)
	assert.Equal(t, first["sandboxId"], id)

	status, _, data = call(t, srv, http.MethodPost, "/api/sandbox/box/ssh-access", nil)
	require.Equal(t, http.StatusOK, status)
	second := decode(t, data)["token"].(string)
	_, valid = srv.SSHAccess(token)
	assert.False(t, valid, "a new access revokes the old")
	status, _, _ = call(t, srv, http.MethodDelete, "/api/sandbox/box/ssh-access?token="+second, nil)
	assert.Equal(t, http.StatusOK, status)
	_, valid = srv.SSHAccess(second)
	assert.False(t, valid, "revoked")

	status, _, data = call(t, srv, http.MethodGet, "/api/sandbox/ssh-access/validate?token="+second, nil)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, "Invalid authentication context", decode(t, data)["message"])
	status, _, _ = call(t, srv, http.MethodPost, "/api/sandbox/nope/ssh-access", nil)
	assert.Equal(t, http.StatusNotFound, status)
}

// previewGet fetches a preview URL by sending it to the server's address
// with the preview's host, as a resolver that knew the proxy domain would.
func previewGet(t *testing.T, srv *daytonatest.Server, raw string, header ...string) (int, string, http.Header) {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	server, err := url.Parse(srv.URL())
	require.NoError(t, err)
	client := &http.Client{
		Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, server.Host)
		}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(body), res.Header
}

// Previews as Daytona's proxy serves them: a URL per port with the
// sandbox's token, signed URLs that open one port until they expire or are
// expired, a public sandbox open to all, and the credentials taken off
// before the sandbox sees the request.
func TestPreviews(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	create(t, srv, "box")
	seen := make(chan http.Header, 16)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		fmt.Fprintf(w, "app %s?%s", r.URL.Path, r.URL.RawQuery)
	}))
	defer app.Close()
	port := app.URL[strings.LastIndex(app.URL, ":")+1:]

	status, _, data := call(t, srv, http.MethodGet, "/api/sandbox/box/ports/"+port+"/preview-url", nil)
	require.Equal(t, http.StatusOK, status, string(data))
	link := decode(t, data)
	id := link["sandboxId"].(string)
	assert.Equal(t, "http://"+port+"-"+id+"."+srv.ProxyDomain(), link["url"])
	token := link["token"].(string)
	require.NotEmpty(t, token)

	status, body, header := previewGet(t, srv, link["url"].(string)+"/page?x=1")
	assert.Equal(t, http.StatusTemporaryRedirect, status, "no credential: to the login")
	assert.Contains(t, header.Get("Location"), "/oidc/authorize")
	status, body, _ = previewGet(t, srv, link["url"].(string)+"/page?x=1", "X-Daytona-Preview-Token", token)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "app /page?x=1", body)
	assert.Empty(t, (<-seen).Get("X-Daytona-Preview-Token"), "the token is taken off")
	status, body, _ = previewGet(t, srv, link["url"].(string)+"/q?DAYTONA_SANDBOX_AUTH_KEY="+token)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "app /q?", body)
	<-seen
	status, _, _ = previewGet(t, srv, link["url"].(string)+"/", "X-Daytona-Preview-Token", "wrong")
	assert.Equal(t, http.StatusTemporaryRedirect, status)

	// Signed URLs open their port alone, until expired.
	status, _, data = call(t, srv, http.MethodGet, "/api/sandbox/box/ports/"+port+"/signed-preview-url?expiresInSeconds=600", nil)
	require.Equal(t, http.StatusOK, status, string(data))
	signed := decode(t, data)
	stoken := signed["token"].(string)
	assert.Regexp(t, `^[a-z0-9]{16}$`, stoken)
	assert.Equal(t, "http://"+port+"-"+stoken+"."+srv.ProxyDomain(), signed["url"])
	status, body, _ = previewGet(t, srv, signed["url"].(string)+"/s")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "app /s?", body)
	<-seen
	status, _, _ = call(t, srv, http.MethodPost, "/api/sandbox/box/ports/"+port+"/signed-preview-url/"+stoken+"/expire", nil)
	assert.Equal(t, http.StatusOK, status)
	status, _, _ = previewGet(t, srv, signed["url"].(string)+"/s")
	assert.Equal(t, http.StatusTemporaryRedirect, status, "expired")
	for path, want := range map[string]string{
		"/api/sandbox/box/ports/0/preview-url":                              "Invalid port",
		"/api/sandbox/box/ports/70000/signed-preview-url":                   "Invalid port",
		"/api/sandbox/box/ports/3000/signed-preview-url?expiresInSeconds=0": "expiresInSeconds must be between 1 second and 24 hours",
	} {
		status, _, data := call(t, srv, http.MethodGet, path, nil)
		assert.Equal(t, http.StatusBadRequest, status, path)
		assert.Equal(t, want, decode(t, data)["message"], path)
	}

	// A public sandbox's previews need nothing.
	status, _, _ = call(t, srv, http.MethodPost, "/api/sandbox/box/public/true", nil)
	require.Equal(t, http.StatusOK, status)
	status, body, _ = previewGet(t, srv, link["url"].(string)+"/open")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "app /open?", body)
	<-seen
}

// The control plane's configuration needs no key and names this server's
// proxy, toolbox and SSH command, and no analytics service.
func TestConfig(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	res, err := http.Get(srv.APIURL() + "/config")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var cfg map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&cfg))
	assert.Equal(t, "http://{{PORT}}-{{sandboxId}}."+srv.ProxyDomain(), cfg["proxyTemplateUrl"])
	assert.Equal(t, srv.URL()+"/toolbox", cfg["proxyToolboxUrl"])
	assert.Equal(t, "ssh -p 2222 {{TOKEN}}@localhost", cfg["sshGatewayCommand"])
	assert.Equal(t, "default", cfg["defaultSnapshot"])
	assert.EqualValues(t, 43200, cfg["maxAutoArchiveInterval"])
	assert.NotContains(t, cfg, "analyticsApiUrl")
}
