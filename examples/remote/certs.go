// Package remoteexample is the code behind the two programs of this
// example: serve runs a Paddock runtime whose sandboxes other nodes may
// drive, drive runs a command in one of them from another process, its
// output streamed back exactly. Nodes authenticate each other with mutual
// TLS; for a try on one machine, serve makes a throwaway authority and
// certificates for 127.0.0.1 in a directory both programs read.
package remoteexample

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The files of a certificates directory.
const (
	caFile   = "ca.pem"
	caKey    = "ca.key"
	certFile = "node.pem"
	keyFile  = "node.key"
)

// EnsureCerts makes a throwaway authority and one node certificate for
// hosts (IP addresses or names) in dir, unless dir already holds them.
// Every node of the example uses the same certificate; real deployments
// issue one per node from their own authority.
func EnsureCerts(dir string, hosts ...string) error {
	if _, err := os.Stat(filepath.Join(dir, certFile)); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	caPriv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "paddock example authority"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(30 * 24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caPriv.PublicKey, caPriv)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	nodePriv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "paddock example node"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(30 * 24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	nodeDER, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &nodePriv.PublicKey, caPriv)
	if err != nil {
		return err
	}
	write := func(name, typ string, der []byte) error {
		return os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
	}
	caKeyDER, err := x509.MarshalPKCS8PrivateKey(caPriv)
	if err != nil {
		return err
	}
	nodeKeyDER, err := x509.MarshalPKCS8PrivateKey(nodePriv)
	if err != nil {
		return err
	}
	return errors.Join(write(caFile, "CERTIFICATE", caDER), write(caKey, "PRIVATE KEY", caKeyDER),
		write(keyFile, "PRIVATE KEY", nodeKeyDER), write(certFile, "CERTIFICATE", nodeDER))
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
