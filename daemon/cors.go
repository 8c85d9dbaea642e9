package daemon

import (
	"net/http"
	"slices"
	"strings"
)

// Headers a browser's Connect, gRPC-Web or Connect streaming call sends and
// reads, beside the token; AllowOrigins lets the origins it trusts use them.
var (
	corsRequestHeaders = []string{"Authorization", "Content-Type", "Connect-Protocol-Version", "Connect-Timeout-Ms",
		"Connect-Accept-Encoding", "Connect-Content-Encoding", "Grpc-Timeout", "X-Grpc-Web", "X-User-Agent", "Traceparent"}
	corsExposedHeaders = []string{"Grpc-Status", "Grpc-Message", "Grpc-Status-Details-Bin", "Content-Encoding", "Connect-Content-Encoding"}
)

// AllowOrigins serves next to browsers on the pages of origins (as
// "https://app.example"; "*" for any) too: a preflight from one of them is
// answered (204) before any token is asked for, and its calls' answers
// name it as allowed, with the headers a gRPC-Web client reads. A request
// from another origin gets no such header, and its browser refuses the
// answer. No cookie is ever allowed: calls carry their bearer token.
func AllowOrigins(origins []string, next http.Handler) http.Handler {
	anyOrigin := slices.Contains(origins, "*")
	allowed := func(origin string) bool { return origin != "" && (anyOrigin || slices.Contains(origins, origin)) }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		w.Header().Add("Vary", "Origin")
		if !allowed(origin) {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "POST, GET")
			h.Set("Access-Control-Allow-Headers", strings.Join(corsRequestHeaders, ", "))
			h.Set("Access-Control-Max-Age", "7200")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", strings.Join(corsExposedHeaders, ", "))
		next.ServeHTTP(w, r)
	})
}
