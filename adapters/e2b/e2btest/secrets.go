package e2btest

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// secret is one secret of the project: its metadata and how many versions
// it has. Values are write-only on E2B, so the server keeps none (nothing
// here ever answers one, and the secret routes' bodies stay out of the
// request log).
type secret struct {
	id       string // sec_ and a sortable TypeID
	name     string // canonical: trimmed, lower case
	version  int64
	metadata map[string]string
	created  time.Time
	updated  time.Time
}

// The API's fixed answers on the secret routes: a caller learns the class
// of a failure and nothing else.
const (
	secretsInvalid  = "Invalid secrets request"
	secretsNotFound = "Secret not found"
	secretsConflict = "Secret cannot be modified in its current state"
)

// secretIDPrefix is reserved for secret ids: no name may start with it.
const secretIDPrefix = "sec_"

// secretRoutes are the secret management routes. Their bodies carry a
// secret's value, so Route leaves them unread (and unrecorded).
var secretRoutes = []string{"POST /secrets", "POST /secrets/{id}"}

// withSecrets answers every secret route with Cache-Control: no-store, as
// the API marks that path family before anything else answers.
func withSecrets(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/secrets" || strings.HasPrefix(r.URL.Path, "/secrets/") {
			w.Header().Set("Cache-Control", "no-store")
		}
		h.ServeHTTP(w, r)
	})
}

// normalizeSecretName is a name's canonical spelling: trimmed, 1 to 128
// bytes of [A-Za-z0-9_-], lower-cased, not starting with sec_.
func normalizeSecretName(in string) (string, bool) {
	name := strings.TrimSpace(in)
	if name == "" || len(name) > 128 {
		return "", false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return "", false
		}
	}
	name = strings.ToLower(name)
	return name, !strings.HasPrefix(name, secretIDPrefix)
}

// findSecret resolves a path's selector as the API does: one that starts
// with sec_ (in any case, spaces around) is an id and never a name; any
// other is a name. ok is false for a selector that is neither (400); a
// valid selector that names nothing answers nil (404). The caller holds
// s.mu.
func (s *Server) findSecret(selector string) (sec *secret, ok bool) {
	classified := strings.ToLower(strings.TrimSpace(selector))
	if strings.HasPrefix(classified, secretIDPrefix) {
		if !validTypeID(classified[len(secretIDPrefix):]) {
			return nil, false
		}
		for _, sec := range s.secrets {
			if sec.id == classified {
				return sec, true
			}
		}
		return nil, true
	}
	name, ok := normalizeSecretName(selector)
	if !ok {
		return nil, false
	}
	for _, sec := range s.secrets {
		if sec.name == name {
			return sec, true
		}
	}
	return nil, true
}

// secretBody reads a secret route's JSON body (at most 1 MiB): a value is
// required (never kept), metadata an object of strings; nil metadata means
// it was omitted.
func secretBody(r *http.Request, named bool) (name string, metadata map[string]string, ok bool) {
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return "", nil, false
	}
	var req struct {
		Name     *string           `json:"name"`
		Value    *string           `json:"value"`
		Metadata map[string]string `json:"metadata"`
	}
	if json.Unmarshal(data, &req) != nil || req.Value == nil || named && req.Name == nil {
		return "", nil, false
	}
	if req.Name != nil {
		name = *req.Name
	}
	return name, req.Metadata, true
}

// createSecret is POST /secrets: 201 with the new secret at version 1; a
// name taken is 409.
func (s *Server) createSecret(w http.ResponseWriter, r *http.Request, _ []byte) {
	raw, metadata, ok := secretBody(r, true)
	name, valid := normalizeSecretName(raw)
	if !ok || !valid || len(strings.TrimSpace(raw)) != len(raw) {
		apiError(w, http.StatusBadRequest, secretsInvalid)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if existing, _ := s.findSecret(name); existing != nil {
		apiError(w, http.StatusConflict, secretsConflict)
		return
	}
	now := time.Now().UTC()
	sec := &secret{id: secretIDPrefix + newTypeID(now), name: name, version: 1, metadata: orEmpty(metadata), created: now, updated: now}
	s.secrets = append(s.secrets, sec)
	writeJSON(w, http.StatusCreated, sec.answer())
}

// withSecret runs f on the route's secret (by id or name) under the
// server's lock; a selector that is neither is 400, one that names nothing
// 404.
func (s *Server) withSecret(w http.ResponseWriter, r *http.Request, f func(sec *secret)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, valid := s.findSecret(r.PathValue("id"))
	switch {
	case !valid:
		apiError(w, http.StatusBadRequest, secretsInvalid)
	case sec == nil:
		apiError(w, http.StatusNotFound, secretsNotFound)
	default:
		f(sec)
	}
}

// updateSecret is POST /secrets/{id}: a new version; metadata given
// replaces the secret's (an empty object clears it), omitted keeps it.
func (s *Server) updateSecret(w http.ResponseWriter, r *http.Request, _ []byte) {
	_, metadata, ok := secretBody(r, false)
	if !ok {
		apiError(w, http.StatusBadRequest, secretsInvalid)
		return
	}
	s.withSecret(w, r, func(sec *secret) {
		sec.version++
		sec.updated = time.Now().UTC()
		if metadata != nil {
			sec.metadata = metadata
		}
		writeJSON(w, http.StatusOK, sec.answer())
	})
}

// getSecret is GET /secrets/{id}, by id or name.
func (s *Server) getSecret(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.withSecret(w, r, func(sec *secret) { writeJSON(w, http.StatusOK, sec.answer()) })
}

// deleteSecret is DELETE /secrets/{id}: 204, every version gone.
func (s *Server) deleteSecret(w http.ResponseWriter, r *http.Request, _ []byte) {
	s.withSecret(w, r, func(sec *secret) {
		s.secrets = slices.DeleteFunc(s.secrets, func(x *secret) bool { return x == sec })
		w.WriteHeader(http.StatusNoContent)
	})
}

// listSecrets is GET /secrets: oldest first, limit 1..100 (default 100),
// X-Next-Token while more remain (the last id answered).
func (s *Server) listSecrets(w http.ResponseWriter, r *http.Request, _ []byte) {
	q := r.URL.Query()
	limit, ok := pageLimit(w, q.Get("limit"), secretsInvalid)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	all := s.secrets
	if tok := q.Get("nextToken"); tok != "" {
		i := slices.IndexFunc(all, func(x *secret) bool { return x.id == tok })
		if i < 0 {
			apiError(w, http.StatusBadRequest, secretsInvalid)
			return
		}
		all = all[i+1:]
	}
	page := all[:min(limit, len(all))]
	out := make([]map[string]any, 0, len(page))
	for _, sec := range page {
		out = append(out, sec.answer())
	}
	if len(all) > len(page) {
		w.Header().Set("X-Next-Token", page[len(page)-1].id)
	}
	writeJSON(w, http.StatusOK, out)
}

// answer is the Secret object: metadata only, never a value.
func (sec *secret) answer() map[string]any {
	return map[string]any{"secretID": sec.id, "name": sec.name, "currentVersion": sec.version, "metadata": sec.metadata,
		"createdAt": sec.created.Format(time.RFC3339Nano), "updatedAt": sec.updated.Format(time.RFC3339Nano)}
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// typeIDAlphabet is the lower-case Crockford base32 of TypeIDs.
const typeIDAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// newTypeID is the 26-character suffix of a sortable TypeID: a UUIDv7
// (milliseconds of t, then random bits) in Crockford base32, so ids made
// later sort later.
func newTypeID(t time.Time) string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	ms := uint64(t.UnixMilli())
	binary.BigEndian.PutUint16(u[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(u[2:6], uint32(ms))
	u[6] = u[6]&0x0f | 0x70 // version 7
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	hi, lo := binary.BigEndian.Uint64(u[:8]), binary.BigEndian.Uint64(u[8:])
	out := make([]byte, 26)
	for i := 25; i >= 0; i-- { // 130 bits: the 128 of the UUID with two zero bits on top
		out[i] = typeIDAlphabet[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out)
}

// validTypeID reports whether s is a TypeID suffix: 26 characters of the
// alphabet, the first at most 7 (128 bits).
func validTypeID(s string) bool {
	if len(s) != 26 || s[0] > '7' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(typeIDAlphabet, rune(s[i])) {
			return false
		}
	}
	return true
}
