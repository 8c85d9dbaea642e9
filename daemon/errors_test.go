package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/daemon"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/require"
)

// A client of any language sees a failure as the Connect code of its kind,
// with the kind and detail in the Failure it carries; what it sends wrong
// (a malformed or oversized message, an unknown RPC or provider) is
// answered by code, and the server serves on.
func TestFailuresAreConnectCodes(t *testing.T) {
	t.Parallel()
	a := fake.New()
	t.Cleanup(a.Reset)
	base, hc := serveRaw(t, a, daemon.Config{MaxMessageBytes: 64 << 10})
	post := func(rpc, contentType string, body []byte) (int, map[string]any) {
		t.Helper()
		res, err := hc.Post(base+daemon.ServicePath+rpc, contentType, bytes.NewReader(body))
		require.NoError(t, err)
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		var v map[string]any
		_ = json.Unmarshal(data, &v)
		return res.StatusCode, v
	}
	kindOf := func(v map[string]any) string {
		details, _ := v["details"].([]any)
		for _, d := range details {
			d := d.(map[string]any)
			if strings.HasSuffix(d["type"].(string), ".Failure") {
				debug, _ := d["debug"].(map[string]any)
				kind, _ := debug["kind"].(string)
				return kind
			}
		}
		return ""
	}
	for _, tc := range []struct {
		name, rpc, body string
		status          int
		code, kind      string
	}{
		{"an unknown sandbox", "Get", `{"handle":{"provider":"fake","name":"absent"}}`, 404, "not_found", "ERROR_KIND_NOT_FOUND"},
		{"an unknown provider", "Create", `{"provider":"nowhere","name":"x"}`, 404, "not_found", "ERROR_KIND_UNKNOWN_PROVIDER"},
		{"a bad name", "Create", `{"provider":"fake","name":"a/b"}`, 400, "invalid_argument", "ERROR_KIND_INVALID"},
		{"a malformed message", "Get", `{"handle":`, 400, "invalid_argument", ""},
		{"a field of the wrong type", "Get", `{"handle":7}`, 400, "invalid_argument", ""},
		{"an oversized message", "Create", `{"provider":"fake","name":"` + strings.Repeat("x", 70<<10) + `"}`, 429, "resource_exhausted", ""},
	} {
		status, v := post(tc.rpc, "application/json", []byte(tc.body))
		require.Equal(t, tc.status, status, tc.name)
		require.Equal(t, tc.code, v["code"], tc.name)
		require.Equal(t, tc.kind, kindOf(v), tc.name)
	}
	status, _ := post("Nothing", "application/json", []byte(`{}`))
	require.Equal(t, http.StatusNotFound, status, "an unknown RPC")
	status, v := post("Create", "application/json", []byte(`{"provider":"fake","name":"still-serving"}`))
	require.Equal(t, http.StatusOK, status, "the server serves on: %v", v)
	require.Equal(t, "still-serving", v["handle"].(map[string]any)["name"])
}

// serveRaw is serve without the Go client: the daemon's base URL and an
// HTTP/2 client for it.
func serveRaw(t *testing.T, a paddock.Adapter, cfg daemon.Config) (string, *http.Client) {
	t.Helper()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{a.Provider(): a}})
	require.NoError(t, err)
	cfg.Transport = rt.Transport()
	hs := startServer(t, rt, cfg)
	return hs.URL, hs.Client()
}

// A gRPC client (and a gRPC-Web one) reads a failure as a gRPC status of
// its kind's code with the Failure among its details, as a Connect client
// does.
func TestFailuresOverGRPC(t *testing.T) {
	t.Parallel()
	a := fake.New()
	t.Cleanup(a.Reset)
	base, hc := serveRaw(t, a, daemon.Config{})
	for _, protocol := range []struct {
		name string
		opt  connect.ClientOption
	}{{"grpc", connect.WithGRPC()}, {"grpc-web", connect.WithGRPCWeb()}} {
		get := connect.NewClient[messages.GetRequest, messages.GetReply](hc, base+daemon.ServicePath+"Get", protocol.opt)
		_, err := get.CallUnary(context.Background(), connect.NewRequest(&messages.GetRequest{Handle: &messages.Handle{Provider: "fake", Name: "absent"}}))
		var ce *connect.Error
		require.ErrorAs(t, err, &ce, protocol.name)
		require.Equal(t, connect.CodeNotFound, ce.Code(), protocol.name)
		var kinds []messages.ErrorKind
		for _, d := range ce.Details() {
			if v, err := d.Value(); err == nil {
				if f, ok := v.(*messages.Failure); ok {
					kinds = append(kinds, f.GetKind())
				}
			}
		}
		require.Equal(t, []messages.ErrorKind{messages.ErrorKind_ERROR_KIND_NOT_FOUND}, kinds, protocol.name)
	}
}

// A request the token guard refuses is answered in its own protocol: a
// gRPC client reads a gRPC status (unauthenticated), a Connect client
// Connect's JSON error.
func TestRefusalsSpeakTheCallersProtocol(t *testing.T) {
	t.Parallel()
	a := fake.New()
	t.Cleanup(a.Reset)
	hs := serveGuarded(t, a, daemon.Token{Secret: paddock.NewSecret("the-token")})
	for _, tc := range []struct{ contentType, wantType, status, grpcStatus string }{
		{"application/grpc", "application/grpc", "200", "16"},
		{"application/grpc-web+proto", "application/grpc-web+proto", "200", "16"},
		{"application/json", "application/json", "401", ""},
	} {
		req, err := http.NewRequest(http.MethodPost, hs.URL+daemon.ServicePath+"List", strings.NewReader(""))
		require.NoError(t, err)
		req.Header.Set("Content-Type", tc.contentType)
		req.Header.Set("Authorization", "Bearer wrong")
		res, err := hs.Client().Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		require.Equal(t, tc.status, strings.Fields(res.Status)[0], tc.contentType)
		require.Equal(t, tc.wantType, res.Header.Get("Content-Type"), tc.contentType)
		require.Equal(t, tc.grpcStatus, res.Header.Get("Grpc-Status")+res.Trailer.Get("Grpc-Status"), tc.contentType)
	}
}
