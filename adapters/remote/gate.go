package remote

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// gate is a node's listener: it accepts TCP connections, holds at most
// maxPending of them (perSource of one address) in their TLS handshake,
// each for at most timeout, and hands on only the connections whose peer
// proved who it is. A connection over a cap evicts the oldest one pending
// (of its address, or of all), so a flood of silent or garbage connections
// costs a bounded number of sockets and goroutines and cannot keep a peer
// that completes its handshake out.
type gate struct {
	raw       net.Listener
	tls       *tls.Config
	timeout   time.Duration
	max, per  int
	log       zerolog.Logger
	ready     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup // the accept loop and the handshakes

	mu      sync.Mutex
	pending []*pendingConn // oldest first
}

// pendingConn is a connection in its handshake.
type pendingConn struct {
	conn   net.Conn
	source string
}

// newGate starts accepting on raw.
func newGate(raw net.Listener, cfg *tls.Config, timeout time.Duration, maxPending, perSource int, log zerolog.Logger) *gate {
	g := &gate{raw: raw, tls: cfg, timeout: timeout, max: maxPending, per: perSource, log: log,
		ready: make(chan net.Conn), done: make(chan struct{})}
	g.wg.Add(1)
	go g.acceptLoop()
	return g
}

// Accept is the next authenticated connection.
func (g *gate) Accept() (net.Conn, error) {
	select {
	case c := <-g.ready:
		return c, nil
	case <-g.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting, ends every pending handshake and waits for them.
func (g *gate) Close() error {
	g.closeOnce.Do(func() {
		close(g.done)
		_ = g.raw.Close()
		g.mu.Lock()
		for _, p := range g.pending {
			_ = p.conn.Close()
		}
		g.mu.Unlock()
	})
	g.wg.Wait()
	return nil
}

func (g *gate) Addr() net.Addr { return g.raw.Addr() }

// Pending is how many connections are in their handshake.
func (g *gate) Pending() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending)
}

// acceptLoop admits each connection; a failing accept (out of file
// descriptors) backs off rather than spin.
func (g *gate) acceptLoop() {
	defer g.wg.Done()
	backoff := time.Duration(0)
	for {
		c, err := g.raw.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			g.log.Warn().Err(err).Dur("retry_in", backoff).Msg("remote: accepting a connection")
			select {
			case <-time.After(backoff):
				continue
			case <-g.done:
				return
			}
		}
		backoff = 0
		g.admit(c)
	}
}

// admit starts c's handshake, evicting the oldest pending connection of
// its address, or of all, when a cap is reached.
func (g *gate) admit(c net.Conn) {
	source, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		source = c.RemoteAddr().String()
	}
	p := &pendingConn{conn: c, source: source}
	g.mu.Lock()
	select {
	case <-g.done:
		g.mu.Unlock()
		_ = c.Close()
		return
	default:
	}
	same := 0
	for _, q := range g.pending {
		if q.source == source {
			same++
		}
	}
	if same >= g.per {
		g.evictLocked(func(q *pendingConn) bool { return q.source == source })
	} else if len(g.pending) >= g.max {
		g.evictLocked(func(*pendingConn) bool { return true })
	}
	g.pending = append(g.pending, p)
	g.wg.Add(1)
	g.mu.Unlock()
	go g.handshake(p)
}

// evictLocked closes the oldest pending connection that match picks; its
// handshake then fails and forgets it.
func (g *gate) evictLocked(match func(*pendingConn) bool) {
	for i, q := range g.pending {
		if match(q) {
			_ = q.conn.Close()
			g.pending = append(g.pending[:i], g.pending[i+1:]...)
			return
		}
	}
}

// handshake authenticates p within the timeout and hands it on.
func (g *gate) handshake(p *pendingConn) {
	defer g.wg.Done()
	tc := tls.Server(p.conn, g.tls)
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	stop := context.AfterFunc(ctx, func() { _ = p.conn.Close() }) // the gate's Close, or the timeout
	err := tc.HandshakeContext(ctx)
	stop()
	cancel()
	g.mu.Lock()
	for i, q := range g.pending {
		if q == p {
			g.pending = append(g.pending[:i], g.pending[i+1:]...)
			break
		}
	}
	g.mu.Unlock()
	if err != nil {
		_ = p.conn.Close()
		g.log.Debug().Str("peer", p.source).Err(err).Msg("remote: a connection failed its handshake")
		return
	}
	select {
	case g.ready <- tc:
	case <-g.done:
		_ = tc.Close()
	}
}
