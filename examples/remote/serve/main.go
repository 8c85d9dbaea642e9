// Command serve runs a Paddock runtime that other nodes may drive: the
// local provider, on the network with mutual TLS. On first run it makes a
// throwaway authority and certificate for -hosts in -certs.
//
//	go run ./examples/remote/serve -addr 127.0.0.1:7400
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	remoteexample "github.com/paddockhq/paddock/examples/remote"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7400", "the address to listen on: one peers can reach, never :port")
	certs := flag.String("certs", filepath.Join(os.TempDir(), "paddock-remote-certs"), "the certificates directory")
	hosts := flag.String("hosts", "127.0.0.1", "comma-separated hosts the example certificate names")
	root := flag.String("root", filepath.Join(os.TempDir(), "paddock-remote-sandboxes"), "where the local provider keeps sandboxes")
	flag.Parse()
	if err := remoteexample.EnsureCerts(*certs, strings.Split(*hosts, ",")...); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := remoteexample.Serve(ctx, *addr, *certs, *root, func() {
		fmt.Printf("serving the local provider at %s (certificates in %s); Ctrl-C stops\n", *addr, *certs)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}
