//go:build linux

// Command paddock-egress is a sandbox's end of its egress proxy, for
// adapters whose sandboxes have no network (the docker adapter runs it
// inside the sandbox, as root). Usage: paddock-egress PORT PIDFILE.
//
// It listens on 127.0.0.1:PORT and carries each connection it accepts,
// as one yamux stream, over its standard input and output to the
// adapter, whose proxy decides where the connection may go. It decides
// nothing itself: whatever reaches it reaches only the adapter.
//
// Once it listens it writes its pid to PIDFILE and prints "ready\n"; then
// its standard output is the yamux session's. It ends with exit 0 when the
// session ends (its standard input closes), and 2 when it could not start.
// An instance already listening on PORT is told to end (SIGTERM, by the
// pid in PIDFILE): the newest instance serves.
package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/yamux"
	"github.com/paddockhq/paddock/internal/tunnel"
)

// takeoverWait bounds the wait for an older instance to let go of the port.
const takeoverWait = 10 * time.Second

func main() { os.Exit(run()) }

func run() int {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: paddock-egress PORT PIDFILE")
		return 2
	}
	port, err := strconv.Atoi(os.Args[1])
	if err != nil || port <= 0 || port > 65535 {
		fmt.Fprintln(os.Stderr, "paddock-egress: not a port:", os.Args[1])
		return 2
	}
	l, err := listen(port, os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "paddock-egress:", err)
		return 2
	}
	if err := os.WriteFile(os.Args[2], []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "paddock-egress:", err)
		return 2
	}
	if _, err := os.Stdout.WriteString("ready\n"); err != nil {
		return 0
	}
	session, err := yamux.Client(stdio{}, tunnel.Config(os.Stderr))
	if err != nil {
		fmt.Fprintln(os.Stderr, "paddock-egress:", err)
		return 2
	}
	go func() {
		<-session.CloseChan()
		os.Exit(0)
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "paddock-egress:", err)
			return 2
		}
		go carry(session, c.(*net.TCPConn))
	}
}

// listen listens on 127.0.0.1:port, telling the instance named in pidfile
// to end when the port is taken.
func listen(port int, pidfile string) (net.Listener, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(takeoverWait)
	told := false
	for {
		l, err := net.Listen("tcp4", addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return l, err
		}
		if !told {
			told = true
			if b, rerr := os.ReadFile(pidfile); rerr == nil {
				if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 1 && pid != os.Getpid() {
					_ = syscall.Kill(pid, syscall.SIGTERM)
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// carry copies both ways between a client and a new stream to the
// adapter, passing each side's end of writing on.
func carry(session *yamux.Session, c *net.TCPConn) {
	defer c.Close()
	s, err := session.OpenStream()
	if err != nil {
		return
	}
	defer s.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(s, c)
		_ = s.Close() // a stream's Close ends its writing only
	}()
	_, err = io.Copy(c, s)
	if err != nil {
		_ = c.Close()
	} else {
		_ = c.CloseWrite()
	}
	<-done
}

// stdio is the process's standard input and output as one connection.
type stdio struct{}

func (stdio) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdio) Close() error                { return os.Stdin.Close() }
