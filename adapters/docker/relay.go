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
// standard error is kept (the first maxRelayErrors bytes) for Errors.
func (a *Adapter) relay(ctx context.Context, sandbox string, e execSpec) (*relayConn, error) {
	e.stdin = true
	x, err := a.startExec(ctx, sandbox, e)
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
			switch {
			case stream == muxStdout && len(data) > 0:
				if _, werr := pw.Write(data); werr != nil {
					pw.CloseWithError(io.EOF)
					return
				}
			case stream != muxStdout && len(data) > 0:
				c.mu.Lock()
				c.errors = append(c.errors, data[:min(len(data), maxRelayErrors-len(c.errors))]...)
				c.mu.Unlock()
			}
			if err != nil {
				pw.CloseWithError(io.EOF)
				return
			}
		}
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

	mu     sync.Mutex
	errors []byte // what it printed on standard error
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
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.errors)
}

func (c *relayConn) LocalAddr() net.Addr                { return c.x.hj.Conn.LocalAddr() }
func (c *relayConn) RemoteAddr() net.Addr               { return c.x.hj.Conn.RemoteAddr() }
func (c *relayConn) SetDeadline(t time.Time) error      { return c.x.hj.Conn.SetDeadline(t) }
func (c *relayConn) SetReadDeadline(t time.Time) error  { return c.x.hj.Conn.SetReadDeadline(t) }
func (c *relayConn) SetWriteDeadline(t time.Time) error { return c.x.hj.Conn.SetWriteDeadline(t) }
