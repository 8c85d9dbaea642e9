package sprites_test

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/adapters/sprites"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/require"
)

// The service RunLeases' child processes reach.
const (
	leaseURLEnv   = "PADDOCK_SPRITES_LEASE_URL"
	leaseTokenEnv = "PADDOCK_SPRITES_LEASE_TOKEN"
)

func TestLeases(t *testing.T) {
	t.Parallel()
	url, token := os.Getenv(leaseURLEnv), os.Getenv(leaseTokenEnv)
	if url == "" {
		srv := newServer(t)
		url, token = srv.URL(), srv.Token()
	}
	conformance.RunLeases(t, leaseSetup(t, url, token))
}

// TestLiveLeases runs RunLeases against the real Sprites service with the
// token in SPRITES_TOKEN (SPRITES_BASE_URL optional).
func TestLiveLeases(t *testing.T) {
	t.Parallel()
	token := os.Getenv("SPRITES_TOKEN")
	if token == "" {
		t.Skip("live Sprites lease test skipped: set SPRITES_TOKEN (and optionally SPRITES_BASE_URL) to run it against the real service")
	}
	captured.Secret(token)
	url := os.Getenv("SPRITES_BASE_URL")
	if url == "" {
		url = sprites.DefaultBaseURL
	}
	conformance.RunLeases(t, leaseSetup(t, url, token))
}

// leaseSetup is RunLeases on the Sprites API at url with token.
func leaseSetup(t *testing.T, url, token string) conformance.LeaseSetup {
	raw := adaptertest.Caller(t, url, "Authorization", "Bearer "+token)
	call := func(method, path, body string) int { status, _ := raw(method, path, body); return status }
	return conformance.LeaseSetup{
		ChildEnv: []string{leaseURLEnv + "=" + url, leaseTokenEnv + "=" + token},
		Adapter: func(t *testing.T) paddock.Adapter {
			a, err := sprites.New(sprites.Config{Token: paddock.NewSecret(token), BaseURL: url, Logger: testLogger()})
			require.NoError(t, err)
			return a
		},
		Foreign: func(t *testing.T, name string) func() bool {
			require.Equal(t, http.StatusCreated, call(http.MethodPost, "/v1/sprites", `{"name":"`+name+`","labels":["team=ops"]}`))
			t.Cleanup(func() { call(http.MethodDelete, "/v1/sprites/"+name, "") })
			return func() bool { return call(http.MethodGet, "/v1/sprites/"+name, "") == http.StatusOK }
		},
	}
}

func TestReapPastMaxAge(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	conformance.RunMaxAge(t, newAdapter(t, srv, func(c *sprites.Config) { c.MaxAge = time.Second }), time.Second)
}
