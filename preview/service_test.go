package preview_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/preview"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func noDial(context.Context, string, int) (net.Conn, error) {
	return nil, errors.New("no network here")
}

// The service mints previews under its base URL, refuses without one, and
// revokes only previews of the sandbox and port it names.
func TestService(t *testing.T) {
	t.Parallel()
	svc, err := preview.NewService(preview.ServiceConfig{BaseURL: "https://example.test/", Dial: noDial})
	require.NoError(t, err)
	p, err := svc.Mint("box", 8080, paddock.ExposeOpts{TTL: time.Minute}, "the setting")
	require.NoError(t, err)
	assert.Equal(t, "https://example.test/preview/box/8080/", p.URL)
	assert.NotContains(t, p.URL, p.Token.Reveal())
	assert.WithinDuration(t, time.Now().Add(time.Minute), p.ExpiresAt, 5*time.Second)

	_, err = svc.Mint("box", 0, paddock.ExposeOpts{}, "the setting")
	require.ErrorIs(t, err, paddock.ErrInvalid, "port 0")

	unset, err := preview.NewService(preview.ServiceConfig{Dial: noDial})
	require.NoError(t, err)
	_, err = unset.Mint("box", 8080, paddock.ExposeOpts{}, "WithSomething")
	require.ErrorIs(t, err, paddock.ErrInvalid)
	assert.Contains(t, err.Error(), "WithSomething")

	require.ErrorIs(t, svc.Revoke("other", p), paddock.ErrInvalid, "another sandbox's preview")
	link, err := svc.Bootstrap("box", p)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(link, "/preview/box/8080/"), link)
	require.NoError(t, svc.Revoke("box", p))

	_, err = preview.NewService(preview.ServiceConfig{Key: []byte("short"), Dial: noDial})
	require.Error(t, err, "a key too short")
}
