package remotetest_test

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/paddockhq/paddock/adapters/remote/remotetest"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// handshake runs a mutual TLS handshake between a server and a client
// configuration over a pipe; either side's refusal. (In TLS 1.3 the
// server verifies the client's certificate after the client finished.)
func handshake(server, client *tls.Config) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		a, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		err = tls.Server(a, server).Handshake()
		_ = a.Close() // ends the client's wait on a refusal
		done <- err
	}()
	b, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return err
	}
	client = client.Clone()
	client.ServerName = "127.0.0.1"
	c := tls.Client(b, client)
	err = c.Handshake()
	if err == nil { // read the server's verdict: a refusal arrives as an alert or a close
		_, err = c.Read(make([]byte, 1))
		if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	_ = b.Close()
	return errors.Join(err, <-done)
}

// Certificates of one authority complete a mutual handshake; one from
// another authority does not.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	ca, err := remotetest.NewAuthority("a")
	require.NoError(t, err)
	serverCert, err := ca.Issue("127.0.0.1")
	require.NoError(t, err)
	clientCert, err := ca.Issue("127.0.0.1")
	require.NoError(t, err)
	require.NoError(t, handshake(ca.Mutual(serverCert), ca.Mutual(clientCert)))

	other, err := remotetest.NewAuthority("b")
	require.NoError(t, err)
	rogue, err := other.Issue("127.0.0.1")
	require.NoError(t, err)
	require.Error(t, handshake(ca.Mutual(serverCert), other.Mutual(rogue)))
}
