package daemon

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"connectrpc.com/connect"
	"github.com/paddockhq/paddock"
)

// Token is a bearer token the server accepts, and the tenant it names
// ("" for none: it sees every sandbox). A tenant's name is 1 to 32 lower
// case letters and digits.
type Token struct {
	Tenant string
	Secret paddock.Secret
}

// RequireTokens serves next only to requests bearing one of tokens
// (Authorization: Bearer <token>), each as its token's tenant; any other
// is refused with Connect's unauthenticated (HTTP 401), the token never
// echoed or logged. A tenant's name that is not allowed, or an empty
// token, is invalid.
func RequireTokens(tokens []Token, next http.Handler) (http.Handler, error) {
	type known struct {
		sum    [32]byte
		tenant string
	}
	all := make([]known, 0, len(tokens))
	for _, t := range tokens {
		if t.Secret.IsZero() || (t.Tenant != "" && !tenantName.MatchString(t.Tenant)) {
			return nil, &paddock.InvalidError{Detail: "daemon: a token must be set, and a tenant's name 1 to 32 lower case letters and digits"}
		}
		all = append(all, known{sum: sha256.Sum256([]byte(t.Secret.Reveal())), tenant: t.Tenant})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(given))
		match, tenant := 0, ""
		for _, k := range all { // every token compared, in constant time
			if subtle.ConstantTimeCompare(sum[:], k.sum[:]) == 1 {
				match, tenant = 1, k.tenant
			}
		}
		if ok && given != "" && match == 1 {
			next.ServeHTTP(w, r.WithContext(withTenant(r.Context(), tenant)))
			return
		}
		refuse(w, r, connect.CodeUnauthenticated, "daemon: a valid bearer token is required")
	}), nil
}

// RequireClientCertificates serves next only to requests whose client
// certificate the server verified (its TLS config asks for one: mutual
// TLS), each as the tenant its subject's common name names; a request
// without one is unauthenticated (401), a certificate naming no tenant is
// refused (403).
func RequireClientCertificates(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
			refuse(w, r, connect.CodeUnauthenticated, "daemon: a verified client certificate is required")
			return
		}
		tenant := r.TLS.VerifiedChains[0][0].Subject.CommonName
		if !tenantName.MatchString(tenant) {
			refuse(w, r, connect.CodePermissionDenied, "daemon: the client certificate's common name is not a tenant's name")
			return
		}
		next.ServeHTTP(w, r.WithContext(withTenant(r.Context(), tenant)))
	})
}

// refuse answers a request the guard refuses with a Connect error of code,
// in the request's own protocol (Connect, gRPC or gRPC-Web; Connect's JSON
// for any other request).
func refuse(w http.ResponseWriter, r *http.Request, code connect.Code, message string) {
	_ = errorWriter.Write(w, r, connect.NewError(code, errors.New(message)))
}

// errorWriter writes an error in the protocol of the request it answers.
var errorWriter = connect.NewErrorWriter()
