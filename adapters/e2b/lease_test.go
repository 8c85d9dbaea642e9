package e2b_test

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The service RunLeases' child processes reach.
const (
	leaseURLEnv = "PADDOCK_E2B_LEASE_URL"
	leaseKeyEnv = "PADDOCK_E2B_LEASE_KEY"
)

func TestLeases(t *testing.T) {
	t.Parallel()
	url, key := os.Getenv(leaseURLEnv), os.Getenv(leaseKeyEnv)
	if url == "" {
		srv := e2btest.NewServer(t)
		url, key = srv.URL(), srv.Key()
	}
	conformance.RunLeases(t, leaseSetup(t, url, url, key))
}

// TestLiveLeases runs RunLeases against the real E2B service with the key
// in E2B_API_KEY (E2B_BASE_URL optional).
func TestLiveLeases(t *testing.T) {
	t.Parallel()
	key := os.Getenv("E2B_API_KEY")
	if key == "" {
		t.Skip("live E2B lease test skipped: set E2B_API_KEY (and optionally E2B_BASE_URL) to run it against the real service")
	}
	captured.Secret(key)
	url := os.Getenv("E2B_BASE_URL")
	if url == "" {
		url = e2b.DefaultBaseURL
	}
	conformance.RunLeases(t, leaseSetup(t, url, "", key))
}

// leaseSetup is RunLeases on the E2B API at url (envd at envdURL, "" =
// each sandbox's own host) with key.
func leaseSetup(t *testing.T, url, envdURL, key string) conformance.LeaseSetup {
	call := adaptertest.Caller(t, url, "X-API-Key", key)
	return conformance.LeaseSetup{
		ChildEnv: []string{leaseURLEnv + "=" + url, leaseKeyEnv + "=" + key},
		Adapter: func(t *testing.T) paddock.Adapter {
			a, err := e2b.New(e2b.Config{APIKey: paddock.NewSecret(key), BaseURL: url, EnvdURL: envdURL, Logger: testLogger(), Timeout: 2 * time.Minute})
			require.NoError(t, err)
			return a
		},
		Foreign: func(t *testing.T, name string) func() bool {
			status, body := call(http.MethodPost, "/sandboxes", `{"templateID":"base","timeout":600,"metadata":{"team":"ops"}}`)
			require.Equal(t, http.StatusCreated, status, string(body))
			var got struct {
				SandboxID string `json:"sandboxID"`
			}
			require.NoError(t, json.Unmarshal(body, &got))
			t.Cleanup(func() { call(http.MethodDelete, "/sandboxes/"+got.SandboxID, "") })
			return func() bool {
				status, _ := call(http.MethodGet, "/sandboxes/"+got.SandboxID, "")
				return status == http.StatusOK
			}
		},
	}
}

// A paused sandbox cannot carry a renewed lease, so it is never an orphan;
// its maximum age still bounds it. A running one whose lease lapsed is.
func TestReapOnPausedSandboxes(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	// The maximum age must outlast the creates and the first reap: CI's
	// loaded machine once took over 2 s for them.
	a := newAdapter(t, srv, func(c *e2b.Config) { c.MaxAge = 10 * time.Second })
	lapsed := paddock.Lease{Owner: "gone", Until: time.Now().Add(-time.Minute)}
	created := time.Now()
	paused, err := a.Create(ctx, "paused-orphan", paddock.CreateOpts{Lease: lapsed})
	require.NoError(t, err)
	require.NoError(t, a.Suspend(ctx, paused))
	_, err = a.Create(ctx, "running-orphan", paddock.CreateOpts{Lease: lapsed})
	require.NoError(t, err)

	report, err := paddock.Reap(ctx, a, paddock.ReapOpts{DryRun: true})
	require.NoError(t, err)
	if time.Since(created) < 10*time.Second { // past it, both are rightly destroyed instead
		assert.Equal(t, []string{"running-orphan"}, report.Orphaned, "the running one's lease lapsed; the paused one's cannot be read")
		assert.Empty(t, report.Destroyed)
	}
	require.Eventually(t, func() bool {
		report, err = paddock.Reap(ctx, a, paddock.ReapOpts{DryRun: true})
		return err == nil && len(report.Destroyed) == 2
	}, time.Minute, 50*time.Millisecond, "both pass their maximum age")
	assert.ElementsMatch(t, []string{"paused-orphan", "running-orphan"}, report.Destroyed)
	report, err = paddock.Reap(ctx, a, paddock.ReapOpts{})
	require.NoError(t, err)
	assert.Len(t, report.Destroyed, 2)
	_, err = a.Get(ctx, paused)
	require.ErrorIs(t, err, paddock.ErrNotFound)
}

// A lease file that cannot be read this time is no evidence: the sandbox
// is not an orphan on a guess, whatever its creation-time lease says.
func TestReapNeverGuessesAnUnreadableLease(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	lapsed := paddock.Lease{Owner: "gone", Until: time.Now().Add(-time.Minute)}
	_, err := a.Create(ctx, "unreadable", paddock.CreateOpts{Lease: lapsed})
	require.NoError(t, err)
	srv.Fail("ENVD /files", e2btest.Status(http.StatusBadGateway))
	report, err := paddock.Reap(ctx, a, paddock.ReapOpts{})
	require.NoError(t, err)
	assert.Empty(t, report.Orphaned, "envd answered 502: the lease is unknown")
	report, err = paddock.Reap(ctx, a, paddock.ReapOpts{DryRun: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"unreadable"}, report.Orphaned, "read (absent: never renewed), the creation-time lease lapsed")
}
