// Package egresstest is a small internet for egress tests, all on
// loopback: one HTTP and one HTTPS server answering for made-up names
// (their certificate signed by a test authority the clients are told to
// trust), a resolver that gives each name an address of its own, a dialer
// that reaches the servers at those addresses on ports 80 and 443, and a
// git repository served over HTTPS (git's "dumb" protocol: plain files).
package egresstest

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/adapters/remote/remotetest"
)

// Names are the names the internet answers for, each at an address of
// its own.
var Names = []string{"pkg.test", "api.pkg.test", "deep.api.pkg.test", "git.test", "denied.test", "other.test"}

// BlobSize is the size of /blob, for throughput measurements.
const BlobSize = 32 << 20

// Internet is the servers and what reaches them. Use New.
type Internet struct {
	// CAPEM is the test authority's certificate, for clients to trust.
	CAPEM []byte
	// RepoPath is the git repository's path on every name's HTTPS server
	// ("/repo.git"); its one file, README, says RepoContent.
	RepoPath string

	addrs       map[string]netip.Addr // name -> its address
	http, https string                // the servers' real host:port
}

// RepoContent is what the served repository's README says.
const RepoContent = "served over https\n"

// New starts the internet, closed when t ends.
func New(t testing.TB) *Internet {
	t.Helper()
	ca, err := remotetest.NewAuthority("paddock egress test CA")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue(Names...)
	if err != nil {
		t.Fatal(err)
	}
	repo := gitRepo(t)
	mux := http.NewServeMux()
	mux.Handle("/repo.git/", http.StripPrefix("/repo.git/", http.FileServer(http.Dir(repo))))
	mux.HandleFunc("/blob", func(w http.ResponseWriter, _ *http.Request) {
		chunk := bytes.Repeat([]byte("0123456789abcdef"), 64<<10/16)
		w.Header().Set("Content-Length", fmt.Sprint(BlobSize))
		for sent := 0; sent < BlobSize; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s\n", r.Host)
	})
	plain := httptest.NewServer(mux)
	t.Cleanup(plain.Close)
	secure := httptest.NewUnstartedServer(mux)
	secure.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	secure.StartTLS()
	t.Cleanup(secure.Close)
	in := &Internet{CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw}), RepoPath: "/repo.git",
		addrs: map[string]netip.Addr{}, http: plain.Listener.Addr().String(), https: secure.Listener.Addr().String()}
	for i, name := range Names {
		in.addrs[name] = netip.AddrFrom4([4]byte{192, 0, 2, byte(10 + i)}) // TEST-NET-1: never a real host
	}
	return in
}

// HTTPSAddr is where the HTTPS server really listens (host:port on
// loopback), for a client that reaches it without the gate (curl
// --connect-to name:443:<HTTPSAddr>).
func (in *Internet) HTTPSAddr() string { return in.https }

// Resolve answers a name's address, as a resolver would; an unknown name
// is not found.
func (in *Internet) Resolve(_ context.Context, host string) ([]netip.Addr, error) {
	a, ok := in.addrs[strings.TrimSuffix(strings.ToLower(host), ".")]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{a}, nil
}

// Dial connects to a name's address on port 80 (HTTP) or 443 (HTTPS);
// anything else is refused.
func (in *Internet) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	ip, err := netip.ParseAddr(host)
	known := false
	for _, a := range in.addrs {
		known = known || err == nil && a == ip
	}
	real := map[string]string{"80": in.http, "443": in.https}[port]
	if !known || real == "" {
		return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("connection refused")}
	}
	return (&net.Dialer{}).DialContext(ctx, network, real)
}

// gitRepo makes a bare repository with one commit, ready for git's dumb
// HTTP protocol (its info/refs written), and answers its directory.
func gitRepo(t testing.TB) string {
	dir := t.TempDir()
	work, bare := filepath.Join(dir, "work"), filepath.Join(dir, "repo.git")
	run := func(in string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = in
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
			"GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	run(work, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(work, "README"), []byte(RepoContent), 0o644); err != nil {
		t.Fatal(err)
	}
	run(work, "add", "README")
	run(work, "commit", "-q", "-m", "first")
	run(dir, "clone", "-q", "--bare", work, bare)
	run(bare, "update-server-info")
	return bare
}
