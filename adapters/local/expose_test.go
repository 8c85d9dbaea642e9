//go:build unix

package local_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
