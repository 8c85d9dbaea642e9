//go:build unix

package local_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/adapters/local/localtest"

	"go.uber.org/goleak"
)

// helperEnv makes the test binary act as a small program inside a sandbox
// (its path is visible there: sandboxes share the host's filesystem).
const helperEnv = "PADDOCK_LOCAL_TEST_HELPER"

func TestMain(m *testing.M) {
	if h := os.Getenv(helperEnv); h != "" {
		os.Exit(runHelper(h))
	}
	code := m.Run()
	localtest.Cleanup()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// runHelper runs one helper program.
func runHelper(name string) int {
	switch name {
	case "loopback":
		// Listen on loopback, connect to it, and print what came through.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Println("listen:", err)
			return 1
		}
		go func() {
			c, err := ln.Accept()
			if err == nil {
				_, _ = c.Write([]byte("pong"))
				_ = c.Close()
			}
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			fmt.Println("dial:", err)
			return 1
		}
		b, _ := io.ReadAll(c)
		fmt.Println(string(b))
		return 0
	case "runtime":
		return runtimeHelper()
	case "daemons":
		return daemonsHelper()
	case "dial-out":
		// Try to reach a public address: no route under isolation.
		_, err := net.Dial("udp", "192.0.2.1:53")
		if err != nil {
			fmt.Println("unreachable")
			return 0
		}
		fmt.Println("reachable")
		return 0
	}
	return 2
}

// runtimeHelper plays a runtime that dies: over the root and sandbox named in
// the environment it runs one command to completion and starts one that
// keeps running, prints both session ids, then waits to be killed.
func runtimeHelper() int {
	a, err := local.New(config(withRoot(os.Getenv("HELPER_ROOT")), withIsolation(local.Isolation(os.Getenv("HELPER_ISOLATION")))))
	if err != nil {
		fmt.Println("new:", err)
		return 1
	}
	c := context.Background()
	h, err := a.Create(c, "survivor", paddock.CreateOpts{})
	if err != nil {
		fmt.Println("create:", err)
		return 1
	}
	done, err := a.Spawn(c, h, paddock.NewCmd("sh", "-c", "echo finished-output; exit 42"), paddock.SpawnOpts{})
	if err != nil {
		fmt.Println("spawn:", err)
		return 1
	}
	for {
		ev, err := done.Next(c)
		if err != nil || ev.Kind.Terminal() {
			break
		}
	}
	live, err := a.Spawn(c, h, paddock.NewCmd("sh", "-c", "echo live-output; exec sleep 1000"), paddock.SpawnOpts{})
	if err != nil {
		fmt.Println("spawn:", err)
		return 1
	}
	if ev, err := live.Next(c); err != nil || string(ev.Data) != "live-output\n" {
		fmt.Println("live:", err)
		return 1
	}
	fmt.Println(done.SessionID(), live.SessionID())
	time.Sleep(time.Hour)
	return 0
}
