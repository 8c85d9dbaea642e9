package docker

import (
	"context"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/paddockhq/paddock/preview"
)

// exposure is the adapter's previews (Expose, Revoke, Previews,
// PreviewBootstrap), served by its own proxy: it reaches a sandbox's port
// through the engine, so previews work with no network at all.
type exposure = preview.Exposure

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
