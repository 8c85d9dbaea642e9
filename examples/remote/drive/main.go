// Command drive runs a command in a sandbox served by another node (see
// ../serve) and streams its output here, exactly once, in order.
//
//	go run ./examples/remote/drive -peer 127.0.0.1:7400 -- sh -c 'echo hello from $(hostname)'
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	remoteexample "github.com/paddockhq/paddock/examples/remote"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7401", "this node's address: the serving node sends frames to it")
	peer := flag.String("peer", "127.0.0.1:7400", "the serving node's address")
	certs := flag.String("certs", filepath.Join(os.TempDir(), "paddock-remote-certs"), "the certificates directory serve made")
	box := flag.String("box", "remote-demo", "the sandbox's name")
	flag.Parse()
	argv := flag.Args()
	if len(argv) == 0 {
		argv = []string{"sh", "-c", "for i in 1 2 3; do echo line $i; sleep 0.2; done"}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := remoteexample.Drive(ctx, *addr, *peer, *certs, *box, argv, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "drive:", err)
		os.Exit(1)
	}
	os.Exit(code)
}
