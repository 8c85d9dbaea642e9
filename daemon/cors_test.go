package daemon_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/daemon"
	"github.com/paddockhq/paddock/fake"
	"github.com/stretchr/testify/require"
)

// A browser on an allowed origin has its preflight answered before any
// token is asked for, then its call's answer names the origin and exposes
// gRPC-Web's headers; another origin's gets no such header, and the call
// still needs its token.
func TestBrowsersOfAllowedOrigins(t *testing.T) {
	t.Parallel()
	a := fake.New()
	t.Cleanup(a.Reset)
	const app, stranger = "https://app.example", "https://elsewhere.example"
	hs := serveGuardedWith(t, a, func(h http.Handler) http.Handler { return daemon.AllowOrigins([]string{app}, h) },
		daemon.Token{Secret: paddock.NewSecret("the-token")})
	do := func(method, origin, token string, headers ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, hs.URL+daemon.ServicePath+"List", strings.NewReader(`{"provider":"fake"}`))
		require.NoError(t, err)
		req.Header.Set("Origin", origin)
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		res, err := hs.Client().Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res
	}
	pre := do(http.MethodOptions, app, "", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization, content-type, x-grpc-web")
	require.Equal(t, http.StatusNoContent, pre.StatusCode)
	require.Equal(t, app, pre.Header.Get("Access-Control-Allow-Origin"))
	for _, h := range []string{"Authorization", "Content-Type", "X-Grpc-Web"} {
		require.Contains(t, pre.Header.Get("Access-Control-Allow-Headers"), h)
	}
	require.Empty(t, pre.Header.Get("Access-Control-Allow-Credentials"), "no cookies")

	call := do(http.MethodPost, app, "the-token")
	require.Equal(t, http.StatusOK, call.StatusCode)
	require.Equal(t, app, call.Header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, call.Header.Get("Access-Control-Expose-Headers"), "Grpc-Status-Details-Bin")
	require.Equal(t, http.StatusUnauthorized, do(http.MethodPost, app, "").StatusCode, "an allowed origin still needs a token")

	for _, res := range []*http.Response{
		do(http.MethodOptions, stranger, "", "Access-Control-Request-Method", "POST"),
		do(http.MethodPost, stranger, "the-token"),
	} {
		require.Empty(t, res.Header.Get("Access-Control-Allow-Origin"), "another origin is not allowed")
	}
}
