package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// On the local provider (no engine needed): the preview answers with its
// token, refuses without it, and refuses once revoked.
func TestPreviews(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out, "local"))
	require.Equal(t, `sandbox on local
the sandbox serves its site on its own loopback
preview of the server's port, under the proxy: true
printed, the token is [redacted]
with the token: 200 "<h1>hello from the sandbox</h1>\n"
without it: 401
after revoking it: 401
`, out.String())
}

func TestUnknownProvider(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.ErrorContains(t, run(context.Background(), &out, "nope"), `unknown provider "nope"`)
}
