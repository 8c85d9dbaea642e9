// Package remoteexample is the code behind the two programs of this
// example: serve runs a Paddock runtime whose sandboxes other nodes may
// drive, drive runs a command in one of them from another process, its
// output streamed back exactly. Nodes authenticate each other with mutual
// TLS; for a try on one machine, serve makes a throwaway authority and
// certificates for 127.0.0.1 in a directory both programs read.
package remoteexample

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/paddockhq/paddock/adapters/remote/remotetest"
)

// The files of a certificates directory.
const (
	caFile   = "ca.pem"
	certFile = "node.pem"
	keyFile  = "node.key"
)

// EnsureCerts makes a throwaway authority and one node certificate for
// hosts (IP addresses or names) in dir, unless dir already holds ones
// valid for another hour (they last a day). Every node of the example
// uses the same certificate; real deployments issue one per node from
// their own authority.
func EnsureCerts(dir string, hosts ...string) error {
	if fresh(filepath.Join(dir, certFile)) {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := remotetest.NewAuthority("paddock example authority")
	if err != nil {
		return err
	}
	cert, err := ca.Issue(hosts...)
	if err != nil {
		return err
	}
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		return err
	}
	write := func(name, typ string, der []byte) error {
		return os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
	}
	return errors.Join(write(caFile, "CERTIFICATE", ca.Cert.Raw), write(keyFile, "PRIVATE KEY", key),
		write(certFile, "CERTIFICATE", cert.Certificate[0]))
}

// fresh reports whether the certificate at path is valid for another
// hour.
func fresh(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return false
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	return err == nil && time.Now().Add(time.Hour).Before(cert.NotAfter)
}

// LoadTLS reads the mutual TLS of a node from dir.
func LoadTLS(dir string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, certFile), filepath.Join(dir, keyFile))
	if err != nil {
		return nil, fmt.Errorf("loading the node's certificate (run serve first, or point -certs at your own): %w", err)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, caFile))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s holds no certificate", filepath.Join(dir, caFile))
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}, nil
}
