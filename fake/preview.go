package fake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/paddockhq/paddock"
)

var _ paddock.Exposer = (*Adapter)(nil)

// preview is one live preview token's scope.
type preview struct {
	sandbox string
	port    int
	expires time.Time
}

// Expose mints a random token for the sandbox's port. The URL carries no
// token; PreviewValid checks one.
func (a *Adapter) Expose(_ context.Context, h paddock.Handle, port int, opts paddock.ExposeOpts) (paddock.Preview, error) {
	opts, err := paddock.ValidateExpose(port, opts)
	if err != nil {
		return paddock.Preview{}, err
	}
	if err := paddock.Require(a, paddock.CapExpose); err != nil {
		return paddock.Preview{}, err
	}
	if _, err := a.lock(h); err != nil {
		return paddock.Preview{}, err
	}
	defer a.mu.Unlock()
	raw := make([]byte, 16)
	_, _ = rand.Read(raw) // crypto/rand.Read never fails
	token := hex.EncodeToString(raw)
	expires := a.now().Add(opts.TTL)
	a.previews[token] = preview{sandbox: h.Name, port: port, expires: expires}
	return paddock.Preview{
		URL:       "https://" + h.Name + ".fake.test/preview/" + strconv.Itoa(port) + "/",
		Port:      port,
		Token:     paddock.NewSecret(token),
		ExpiresAt: expires,
	}, nil
}

// Revoke ends a preview of this sandbox; a token of another sandbox or port
// is invalid.
func (a *Adapter) Revoke(_ context.Context, h paddock.Handle, p paddock.Preview) error {
	if err := paddock.Require(a, paddock.CapExpose); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	pv, ok := a.previews[p.Token.Reveal()]
	if !ok || pv.sandbox != h.Name || pv.port != p.Port {
		return &paddock.InvalidError{Detail: "preview token does not belong to this sandbox and port"}
	}
	delete(a.previews, p.Token.Reveal())
	return nil
}

// PreviewValid reports whether p's token would be accepted now: minted,
// not revoked, not expired, for the same port.
func (a *Adapter) PreviewValid(p paddock.Preview) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	pv, ok := a.previews[p.Token.Reveal()]
	return ok && pv.port == p.Port && a.now().Before(pv.expires)
}
