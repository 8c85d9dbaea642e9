package docker

import (
	"context"
	"io"
	"net"
	"sync"
	"time"
)

// maxRelayErrors bounds what a relay keeps of its exec's standard error.
const maxRelayErrors = 4 << 10

// relay starts e (with stdin) and returns it as a connection: reads are
// its standard output, writes its standard input. What it prints on
// standard error is kept (from its start, about maxRelayErrors bytes) for
// Errors.
func (a *Adapter) relay(ctx context.Context, sandbox string, e execSpec) (*relayConn, error) {
	e.stdin = true
	x, err := a.startExec(ctx, sandbox, e)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	c := &relayConn{x: x, pr: pr, done: make(chan struct{}), errors: capped{max: maxRelayErrors}}
	go func() {
		defer close(c.done)
		_ = pump(context.Background(), x, pw, &c.errors) // a reader that left, or the end: both end the relay
		pw.CloseWithError(io.EOF)
	}()
	return c, nil
}

// relayConn is an exec seen as a connection: reads are its stdout,
// writes its stdin.
type relayConn struct {
	x    *attached
	pr   *io.PipeReader
	done chan struct{} // the exec's output ended
	once sync.Once

	errors capped // what it printed on standard error; read once done is closed
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

// Errors is what the relay printed on standard error, once its output
// ended (it waits for that).
func (c *relayConn) Errors() string {
	<-c.done
	return c.errors.String()
}

func (c *relayConn) LocalAddr() net.Addr                { return c.x.hj.Conn.LocalAddr() }
func (c *relayConn) RemoteAddr() net.Addr               { return c.x.hj.Conn.RemoteAddr() }
func (c *relayConn) SetDeadline(t time.Time) error      { return c.x.hj.Conn.SetDeadline(t) }
func (c *relayConn) SetReadDeadline(t time.Time) error  { return c.x.hj.Conn.SetReadDeadline(t) }
func (c *relayConn) SetWriteDeadline(t time.Time) error { return c.x.hj.Conn.SetWriteDeadline(t) }
