package daytona_test

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/daytona"
	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/require"
)

// The service RunLeases' child processes reach.
const (
	leaseURLEnv = "PADDOCK_DAYTONA_LEASE_URL"
	leaseKeyEnv = "PADDOCK_DAYTONA_LEASE_KEY"
)

func TestLeases(t *testing.T) {
	t.Parallel()
	url, key := os.Getenv(leaseURLEnv), os.Getenv(leaseKeyEnv)
	if url == "" {
		srv := daytonatest.NewServer(t)
		url, key = srv.APIURL(), srv.Key()
	}
	conformance.RunLeases(t, leaseSetup(t, url, key))
}

// TestLiveLeases runs RunLeases against the real Daytona service with the
// key in DAYTONA_API_KEY (DAYTONA_API_URL optional).
func TestLiveLeases(t *testing.T) {
	t.Parallel()
	key := os.Getenv("DAYTONA_API_KEY")
	if key == "" {
		t.Skip("live Daytona lease test skipped: set DAYTONA_API_KEY (and optionally DAYTONA_API_URL) to run it against the real service")
	}
	captured.Secret(key)
	url := os.Getenv("DAYTONA_API_URL")
	if url == "" {
		url = daytona.DefaultAPIURL
	}
	conformance.RunLeases(t, leaseSetup(t, url, key))
}

// leaseSetup is RunLeases on the Daytona API at url with key.
func leaseSetup(t *testing.T, url, key string) conformance.LeaseSetup {
	raw := adaptertest.Caller(t, url, "Authorization", "Bearer "+key)
	call := func(method, path, body string) int { status, _ := raw(method, path, body); return status }
	return conformance.LeaseSetup{
		ChildEnv: []string{leaseURLEnv + "=" + url, leaseKeyEnv + "=" + key},
		Adapter: func(t *testing.T) paddock.Adapter {
			a, err := daytona.New(daytona.Config{APIKey: paddock.NewSecret(key), APIURL: url, Logger: testLogger(),
				Timeout: 2 * time.Minute, StartTimeout: 2 * time.Minute})
			require.NoError(t, err)
			return a
		},
		Foreign: func(t *testing.T, name string) func() bool {
			require.Equal(t, http.StatusOK, call(http.MethodPost, "/sandbox", `{"name":"`+name+`","labels":{"team":"ops"}}`))
			t.Cleanup(func() { call(http.MethodDelete, "/sandbox/"+name, "") })
			return func() bool { return call(http.MethodGet, "/sandbox/"+name, "") == http.StatusOK }
		},
	}
}

func TestReapPastMaxAge(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	conformance.RunMaxAge(t, newAdapter(t, srv, slowMachine, func(c *daytona.Config) { c.MaxAge = time.Second }), time.Second)
}
