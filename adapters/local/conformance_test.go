//go:build unix

package local_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/egress/egresstest"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/adapters/local/localtest"
	"github.com/paddockhq/paddock/conformance"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newLocal returns an adapter over a fresh root, closed when the test ends.
func newLocal(t testing.TB, opts ...option) *local.Adapter {
	t.Helper()
	return localtest.New(t, config(opts...))
}

// shellConfig is the suite on shell fixtures, its network-policy case
// watching the policy at work on the test internet in (curl through the
// sandbox's proxy).
func shellConfig(in *egresstest.Internet) conformance.Config {
	return conformance.Config{Fixtures: conformance.ShellFixtures(),
		PreviewProbe: conformance.ProbePreviewHTTP,
		Egress:       conformance.CurlEgress(in.CAPEM, "*.pkg.test", "https://api.pkg.test/", "https://denied.test/", "hello from api.pkg.test")}
}

// withInternet sends the sandboxes' proxies to the test internet in.
func withInternet(in *egresstest.Internet) option {
	return func(c *local.Config) { c.Egress = local.EgressConfig{Resolve: in.Resolve, Dial: in.Dial} }
}

func TestConformance(t *testing.T) {
	t.Parallel()
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			in := egresstest.New(t)
			cfg := shellConfig(in)
			cfg.Adapter = newPreviewLocal(t, opt, withInternet(in))
			cfg.Except = []string{conformance.LoadCase} // run through the runtime, which calls the adapter as the raw case does
			conformance.Run(t, cfg)
		})
	}
}

func TestConformanceThroughTheRuntime(t *testing.T) {
	t.Parallel()
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			in := egresstest.New(t)
			rt := startRuntime(t, newPreviewLocal(t, opt, withInternet(in)))
			conformance.RunRuntime(t, rt, paddock.ProviderLocal, shellConfig(in))
		})
	}
}

// newPreviewLocal returns an adapter whose preview proxy is served on a
// loopback server, with the init program built for the tests (the load
// case starts 500 sandboxes). The drain keeps its default limits: the load
// case, which starves every reader on a 2-core machine, is where a drain
// that counted a holder it cannot see against the kill's limit ended
// commands output_truncated.
func newPreviewLocal(t testing.TB, opts ...option) *local.Adapter {
	return newLocal(t, append([]option{withInitProgram(localtest.InitProgram(t))}, opts...)...)
}

// leaseRootEnv carries the adapter's root to RunLeases' child processes.
const leaseRootEnv = "PADDOCK_LOCAL_LEASE_ROOT"

func TestLeases(t *testing.T) {
	t.Parallel()
	root := os.Getenv(leaseRootEnv)
	if root == "" {
		root = t.TempDir()
	}
	conformance.RunLeases(t, conformance.LeaseSetup{
		ChildEnv: []string{leaseRootEnv + "=" + root},
		Adapter: func(t *testing.T) paddock.Adapter {
			a, err := local.New(config(withRoot(root)))
			require.NoError(t, err)
			t.Cleanup(func() { _ = a.Close() })
			return a
		},
		Foreign: func(t *testing.T, name string) func() bool {
			dir := filepath.Join(root, name)
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "fs"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not Paddock's"), 0o644))
			return func() bool {
				_, err := os.Stat(filepath.Join(dir, "notes.txt"))
				return err == nil
			}
		},
	})
}

func TestReapPastMaxAge(t *testing.T) {
	t.Parallel()
	a, err := local.New(config(withRoot(t.TempDir()), withMaxAge(time.Second)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	conformance.RunMaxAge(t, a, time.Second)
}

// A server a command starts on the sandbox's loopback is reachable through
// the preview proxy with the header token, in its own network namespace
// when isolated, and no more once the preview is revoked.
func TestPreviewReachesTheSandboxsLoopback(t *testing.T) {
	t.Parallel()
	needTools(t, "python3")
	for mode, opt := range isolationModes(t) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			a := newPreviewLocal(t, opt)
			h := box(t, a, "site")
			port := 8000
			if mode == "unisolated" {
				port = freePort(t)
			}
			_, code := execOut(t, a, h, "mkdir -p www && echo hello from the sandbox > www/index.html")
			require.Equal(t, 0, code)
			server := sh(t, a, h, fmt.Sprintf("cd www && exec python3 -m http.server %d --bind 127.0.0.1", port), paddock.SpawnOpts{})
			p, err := a.Expose(ctx, h, port, paddock.ExposeOpts{})
			require.NoError(t, err)
			assert.NotContains(t, p.URL, p.Token.Reveal())

			get := func(authorize bool) (int, string) {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"index.html", nil)
				require.NoError(t, err)
				if authorize {
					p.Authorize(req)
				}
				res, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer res.Body.Close()
				body, _ := io.ReadAll(res.Body)
				return res.StatusCode, string(body)
			}
			var status int
			var body string
			require.Eventually(t, func() bool {
				status, body = get(true)
				return status == http.StatusOK
			}, 30*time.Second, 50*time.Millisecond, "the server answers through the preview (last %d)", status)
			assert.Equal(t, "hello from the sandbox\n", body)
			status, _ = get(false)
			assert.Equal(t, http.StatusUnauthorized, status, "no token, no preview")

			if mode != "unisolated" {
				other := box(t, a, "other-site")
				q, err := a.Expose(ctx, other, port, paddock.ExposeOpts{})
				require.NoError(t, err)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, q.URL, nil)
				q.Authorize(req)
				res, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				_ = res.Body.Close()
				assert.Equal(t, http.StatusBadGateway, res.StatusCode, "another sandbox's preview does not reach this loopback")
			}

			require.NoError(t, a.Revoke(ctx, h, p))
			status, _ = get(true)
			assert.Equal(t, http.StatusUnauthorized, status, "a revoked preview stops working")
			require.NoError(t, a.TerminateSession(ctx, h, server.SessionID(), paddock.TerminateOpts{}))
		})
	}
}
