package conformance

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

// previewPort is the port the expose case exposes.
const previewPort = 8080

// 23. Expose returns an http(s) URL without the token in it; where a probe
// is configured, the token works until it is revoked.
func exposeRevoke(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	p, err := paddock.Expose(ctx, s.a, h, previewPort, paddock.ExposeOpts{})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(p.URL, "http"), "a preview URL starts with http: %q", p.URL)
	require.False(t, p.Token.IsZero(), "a preview carries a token")
	require.NotContains(t, p.URL, p.Token.Reveal(), "the token is never part of the URL")
	require.Equal(t, previewPort, p.Port)
	require.False(t, p.ExpiresAt.IsZero(), "a preview expires")

	if s.cfg.PreviewProbe != nil {
		ok, err := s.cfg.PreviewProbe(ctx, p)
		require.NoError(t, err)
		require.True(t, ok, "a fresh preview token works")
	}
	require.NoError(t, paddock.Revoke(ctx, s.a, h, p))
	if s.cfg.PreviewProbe != nil {
		ok, err := s.cfg.PreviewProbe(ctx, p)
		require.NoError(t, err)
		require.False(t, ok, "a revoked preview token stops working")
	}
}

// 23 refused. Without expose the facade refuses.
func exposeRefused(t testing.TB, s *suite) {
	h := s.fresh(t)
	_, err := paddock.Expose(s.ctx(t), s.a, h, previewPort, paddock.ExposeOpts{})
	requireKind(t, err, paddock.ErrNotSupported)
}

// ProbePreviewHTTP is a PreviewProbe for adapters whose previews are
// served over HTTP: it requests the preview's URL with its token and
// reports whether the token was accepted (any answer but 401; where
// nothing listens on the port, the proxy answers 502).
func ProbePreviewHTTP(ctx context.Context, p paddock.Preview) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return false, err
	}
	p.Authorize(req)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	_ = res.Body.Close()
	return res.StatusCode != http.StatusUnauthorized, nil
}
