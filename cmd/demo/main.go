// Command demo is how a newcomer meets Paddock: a web console and a CLI over
// the actor runtime, on the embedded local provider by default (no account,
// daemon or network needed) and on the fake.
//
//	go run ./cmd/demo                                  # the console on 127.0.0.1:8080
//	go run ./cmd/demo run -- sh -c 'echo hi; exit 3'   # stream a command, exit with its code
//	go run ./cmd/demo sessions                         # list sessions
//	go run ./cmd/demo attach ID                        # replay a session from byte zero, then tail
//	go run ./cmd/demo terminate [-force] ID            # stop a session
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
