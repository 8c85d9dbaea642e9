package conformance

import (
	"errors"
	"strings"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

// 1. BuildHandle has the adapter's provider and the name, and no instance id.
func buildHandleIsPure(t testing.TB, s *suite) {
	name := s.name()
	h := s.a.BuildHandle(name)
	require.Equal(t, s.a.Provider(), h.Provider)
	require.Equal(t, name, h.Name)
	require.Empty(t, h.InstanceID)
	require.Equal(t, h, s.a.BuildHandle(name), "BuildHandle is pure")
}

// 2. The capabilities are a subset of the closed set.
func capabilitiesAreKnown(t testing.TB, s *suite) {
	require.NoError(t, s.a.Capabilities().Validate())
}

// 3. A URL only with public_url, and then an http(s) one; ErrNoPublicURL
// only without it; any other error passes.
func publicURLAgrees(t testing.TB, s *suite) {
	h := s.fresh(t)
	url, err := paddock.PublicURL(s.ctx(t), s.a, h)
	advertised := paddock.Supports(s.a, paddock.CapPublicURL)
	switch {
	case err == nil:
		require.True(t, advertised, "PublicURL returned %q without advertising public_url", url)
		require.True(t, strings.HasPrefix(url, "http"), "a public URL starts with http: %q", url)
	case errors.Is(err, paddock.ErrNoPublicURL):
		require.False(t, advertised, "PublicURL is unsupported although public_url is advertised")
	}
}
