package main

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/daemon"
	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP/HTTP traces receiver: the spans paddockd exports,
// and everything it sent, to look for secrets in.
type collector struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	raw   []byte
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "not an OTLP traces export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.raw = append(c.raw, body...)
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			c.spans = append(c.spans, ss.GetSpans()...)
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(nil)
}

// span is the exported span named name, if any.
func (c *collector) span(name string) *tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.IndexFunc(c.spans, func(s *tracepb.Span) bool { return s.GetName() == name })
	if i < 0 {
		return nil
	}
	return c.spans[i]
}

// With an OTLP endpoint paddockd sends a span per request it serves, a
// child of the caller's (W3C traceparent), and the runtime's span per
// operation; the token is in none of it.
func TestSendsTracesOverOTLP(t *testing.T) {
	t.Parallel()
	col := &collector{}
	srv := httptest.NewServer(col)
	t.Cleanup(srv.Close)
	tokens := filepath.Join(t.TempDir(), "tokens")
	const token = "pdk-traced-token-0123456789"
	require.NoError(t, os.WriteFile(tokens, []byte(token+"\n"), 0o600))
	addr, _ := start(t, "-tokens-file", tokens, "-otlp-endpoint", srv.URL+"/v1/traces")
	hc := h2c()
	defer hc.CloseIdleConnections()
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+daemon.ServicePath+"Create", strings.NewReader(`{"provider":"fake","name":"traced"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Traceparent", "00-"+traceID+"-"+parentID+"-01")
	res, err := hc.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, string(body))

	// The batcher sends within seconds; polled, with a hang bound.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for col.span(daemon.ServicePath+"Create") == nil || col.span("paddock.create") == nil {
		select {
		case <-ctx.Done():
			col.mu.Lock()
			defer col.mu.Unlock()
			t.Fatalf("spans received: %v", col.spans)
		case <-time.After(50 * time.Millisecond):
		}
	}
	served := col.span(daemon.ServicePath + "Create")
	require.Equal(t, traceID, hex.EncodeToString(served.GetTraceId()), "the caller's trace")
	require.Equal(t, parentID, hex.EncodeToString(served.GetParentSpanId()), "the caller's span is its parent")
	col.mu.Lock()
	defer col.mu.Unlock()
	require.NotContains(t, string(col.raw), token, "no token in what is exported")
}
