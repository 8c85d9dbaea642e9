package daemon

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/paddockhq/paddock"
)

// RequireTokens serves next only to requests bearing one of tokens
// (Authorization: Bearer <token>); any other is refused with Connect's
// unauthenticated (HTTP 401), the token never echoed or logged.
func RequireTokens(tokens []paddock.Secret, next http.Handler) http.Handler {
	sums := make([][32]byte, 0, len(tokens))
	for _, t := range tokens {
		sums = append(sums, sha256.Sum256([]byte(t.Reveal())))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(given))
		match := 0
		for _, s := range sums {
			match |= subtle.ConstantTimeCompare(sum[:], s[:])
		}
		if !ok || given == "" || match == 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code":"unauthenticated","message":"daemon: a valid bearer token is required"}`))
			return
		}
		next.ServeHTTP(w, r)
	})
}
