package docker

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/paddockhq/paddock"
)

// Previews is the preview proxy: mount it on the caller's server at
// /preview/ (PreviewBaseURL says where). It reaches a sandbox's port
// through the engine, so previews work with no network at all.
func (a *Adapter) Previews() http.Handler { return a.previews.Handler() }

// PreviewBootstrap returns a single-use link (relative to PreviewBaseURL's
// server) that sets p's token as an HttpOnly cookie and opens the preview:
// for browsers, which cannot send the header.
func (a *Adapter) PreviewBootstrap(h paddock.Handle, p paddock.Preview) (string, error) {
	return a.previews.Bootstrap(h.Name, p)
}

// Expose mints a preview of port: a URL under PreviewBaseURL and a token,
// bound to this sandbox and port, valid for the TTL, sent only as a header.
// Nothing opens in the sandbox: it keeps no network.
func (a *Adapter) Expose(ctx context.Context, h paddock.Handle, port int, opts paddock.ExposeOpts) (paddock.Preview, error) {
	p, err := a.previews.Mint(h.Name, port, opts, "Config.PreviewBaseURL")
	if err != nil {
		return paddock.Preview{}, err
	}
	if _, err := a.inspect(ctx, h.Name); err != nil {
		return paddock.Preview{}, err
	}
	return p, nil
}

// Revoke ends a preview at once (in this process's proxy; expiry bounds it
// everywhere else).
func (a *Adapter) Revoke(_ context.Context, h paddock.Handle, p paddock.Preview) error {
	return a.previews.Revoke(h.Name, p)
}

// DialPort opens a connection to port on the sandbox's loopback through
// one exec relaying stdin and stdout (nc inside the sandbox).
func (a *Adapter) DialPort(ctx context.Context, sandbox string, port int) (net.Conn, error) {
	x, err := a.startExec(ctx, sandbox, execSpec{cmd: sh(scriptDial, strconv.Itoa(port)), stdin: true})
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	c := &relayConn{x: x, pr: pr, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		buf := make([]byte, 32<<10)
		for {
			stream, data, err := x.next(buf)
			if stream == muxStdout && len(data) > 0 {
				if _, werr := pw.Write(data); werr != nil {
					break
				}
			}
			if err != nil {
				pw.CloseWithError(io.EOF)
				return
			}
		}
		pw.CloseWithError(io.EOF)
	}()
	return c, nil
}

// relayConn is a sandbox port seen through a relay exec: reads are the
// relay's stdout, writes its stdin.
type relayConn struct {
	x    *attached
	pr   *io.PipeReader
	done chan struct{}
	once sync.Once
}

func (c *relayConn) Read(p []byte) (int, error)  { return c.pr.Read(p) }
func (c *relayConn) Write(p []byte) (int, error) { return c.x.hj.Conn.Write(p) }

// CloseWrite ends the relay's stdin (a request body is done).
func (c *relayConn) CloseWrite() error { return c.x.closeWrite() }

func (c *relayConn) Close() error {
	c.once.Do(func() {
		c.x.close()
		_ = c.pr.Close()
		<-c.done
	})
	return nil
}

func (c *relayConn) LocalAddr() net.Addr                { return c.x.hj.Conn.LocalAddr() }
func (c *relayConn) RemoteAddr() net.Addr               { return c.x.hj.Conn.RemoteAddr() }
func (c *relayConn) SetDeadline(t time.Time) error      { return c.x.hj.Conn.SetDeadline(t) }
func (c *relayConn) SetReadDeadline(t time.Time) error  { return c.x.hj.Conn.SetReadDeadline(t) }
func (c *relayConn) SetWriteDeadline(t time.Time) error { return c.x.hj.Conn.SetWriteDeadline(t) }
