// Package preview signs and checks preview tokens and serves the reverse
// proxy that carries a preview's requests into a sandbox. A token is bound
// to one sandbox and one port, expires, and is accepted only in the
// Authorization header (or, for browsers, in an HttpOnly cookie set by a
// single-use bootstrap link); the sandbox never sees it. Any adapter that
// can dial a port inside its sandboxes (Docker, local) reuses it.
package preview

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrInvalidToken is every token failure: malformed, tampered, for
// another sandbox or port, expired or revoked. It says no more, so a
// caller learns nothing from a refusal.
var ErrInvalidToken = errors.New("preview: invalid token")

// MinKeyLen is the shortest signing key accepted.
const MinKeyLen = 32

const (
	version = "pdk1"
	domain  = "paddock-preview-v1"
)

// Signer mints and verifies tokens with one HMAC-SHA256 key. Processes
// sharing the key accept each other's tokens.
type Signer struct {
	key []byte
	now func() time.Time
}

// NewSigner returns a signer for key (at least MinKeyLen bytes).
func NewSigner(key []byte) (*Signer, error) {
	if len(key) < MinKeyLen {
		return nil, fmt.Errorf("preview: the signing key has %d bytes, at least %d are needed", len(key), MinKeyLen)
	}
	return &Signer{key: append([]byte(nil), key...), now: time.Now}, nil
}

// NewRandomSigner returns a signer with a fresh random key: its tokens are
// valid only in this process.
func NewRandomSigner() *Signer {
	key := make([]byte, MinKeyLen)
	if _, err := rand.Read(key); err != nil {
		panic("preview: no randomness: " + err.Error()) // crypto/rand does not fail on Linux
	}
	return &Signer{key: key, now: time.Now}
}

// Mint returns a token for port of sandbox, valid for ttl, and its expiry.
// Every token is unique (a random nonce), so revoking one leaves the
// others valid.
func (s *Signer) Mint(sandbox string, port int, ttl time.Duration) (string, time.Time) {
	expires := s.now().Add(ttl)
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	payload := strconv.Itoa(port) + ":" + strconv.FormatInt(expires.UnixNano(), 10) + ":" +
		base64.RawURLEncoding.EncodeToString(nonce)
	return version + "." + payload + "." + s.mac(sandbox, payload), expires
}

// Verify checks token for port of sandbox and returns its expiry. The MAC
// is compared (in constant time) before anything in the token is parsed.
func (s *Signer) Verify(token, sandbox string, port int) (time.Time, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[0] != version {
		return time.Time{}, ErrInvalidToken
	}
	want := s.mac(sandbox, parts[1])
	if !hmac.Equal([]byte(want), []byte(parts[2])) {
		return time.Time{}, ErrInvalidToken
	}
	fields := strings.Split(parts[1], ":")
	if len(fields) != 3 {
		return time.Time{}, ErrInvalidToken
	}
	p, err1 := strconv.Atoi(fields[0])
	ns, err2 := strconv.ParseInt(fields[1], 10, 64)
	if err1 != nil || err2 != nil || p != port {
		return time.Time{}, ErrInvalidToken
	}
	expires := time.Unix(0, ns)
	if !s.now().Before(expires) {
		return time.Time{}, ErrInvalidToken
	}
	return expires, nil
}

// mac authenticates the sandbox (which the token does not carry: the
// route names it) with the payload.
func (s *Signer) mac(sandbox, payload string) string {
	m := hmac.New(sha256.New, s.key)
	for _, part := range []string{domain, sandbox, payload} {
		m.Write([]byte(part))
		m.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
