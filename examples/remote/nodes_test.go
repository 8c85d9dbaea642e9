package remoteexample

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// What the README shows in two terminals: serve, then drive a command on
// it; its output and exit code come back.
func TestServeAndDrive(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	certs := t.TempDir()
	require.NoError(t, EnsureCerts(certs, "127.0.0.1"))
	serving := freeAddr(t)
	serveCtx, stop := context.WithCancel(ctx)
	ready, served := make(chan struct{}), make(chan error, 1)
	go func() { served <- Serve(serveCtx, serving, certs, t.TempDir(), func() { close(ready) }) }()
	select {
	case <-ready:
	case err := <-served:
		t.Fatalf("serve: %v", err)
	}

	driving := freeAddr(t)
	for range 2 { // the second time from a new node at the same address, as a restarted driver is
		var out bytes.Buffer
		code, err := Drive(ctx, driving, serving, certs, "demo", []string{"sh", "-c", "echo hello; echo oops >&2; exit 3"}, &out)
		require.NoError(t, err)
		require.Equal(t, 3, code)
		require.Contains(t, out.String(), "hello\n")
		require.Contains(t, out.String(), "oops\n")
	}
	var out bytes.Buffer

	_, err := Drive(ctx, freeAddr(t), serving, t.TempDir(), "demo", []string{"true"}, &out)
	require.ErrorContains(t, err, "certificate", "a node without certificates does not start")
	stop()
	require.NoError(t, <-served)
}
