package remote

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"
	hremote "github.com/anthdm/hollywood/remote"
	"github.com/paddockhq/paddock"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"
)

// Defaults of NodeConfig.
const (
	// DefaultBufferSize is the largest batch a node accepts from a peer.
	DefaultBufferSize = 64 << 20
	// DefaultMaxMessage bounds one message and one batch a node sends.
	DefaultMaxMessage = 16 << 20
	// DefaultQueueBytes bounds what a node holds for one peer.
	DefaultQueueBytes = 64 << 20
	// DefaultHandshakeTimeout bounds a new connection's handshake.
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultMaxPending bounds the connections in their handshake at once.
	DefaultMaxPending = 64
	// DefaultMaxPendingPerSource bounds those of one address.
	DefaultMaxPendingPerSource = 16
)

// Timing of the links to peers.
const (
	dialTimeout  = 5 * time.Second  // one dial, TLS handshake included
	writeTimeout = 30 * time.Second // one batch
	redialAfter  = time.Second      // after a failed dial, messages to the peer are dropped this long
)

// NodeConfig configures a node's remote layer.
type NodeConfig struct {
	// Addr is the concrete host:port the node listens on; it is also the
	// address in every PID the node hands out, so it must be one peers
	// can reach (never :port or 0.0.0.0).
	Addr string
	// TLS is mutual TLS: the node's certificate (with Addr's host as a
	// subject alternative name), RootCAs and ClientCAs naming the
	// authority, and ClientAuth tls.RequireAndVerifyClientCert. Anything
	// less is refused.
	TLS *tls.Config
	// BufferSize is the largest batch accepted from a peer; 0 =
	// DefaultBufferSize. It must be at least twice every peer's
	// MaxMessage.
	BufferSize int
	// MaxMessage bounds one encoded message and one batch this node
	// sends; 0 = DefaultMaxMessage. A reply over it crosses as its own
	// invalid failure; any other message over it is dropped and counted.
	MaxMessage int
	// QueueBytes bounds the encoded messages waiting for one peer; 0 =
	// DefaultQueueBytes. A message that finds the queue full is dropped
	// and counted.
	QueueBytes int
	// HandshakeTimeout bounds how long a new connection may take to prove
	// its peer (the mutual TLS handshake) before it is closed; 0 =
	// DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// MaxPending bounds the connections in their handshake at once, and
	// MaxPendingPerSource those of one address; a connection over either
	// closes the oldest one pending (of its address, or of all), so a
	// flood of silent connections cannot hold the node's sockets or keep a
	// quick peer out. 0 = DefaultMaxPending, DefaultMaxPendingPerSource.
	MaxPending, MaxPendingPerSource int
	// Logger receives the node's warnings (a dropped message, a lost
	// connection, a peer's message refused); the zero Logger is silent.
	Logger zerolog.Logger
}

// protocol is the protobuf package of the messages that may cross.
const protocol = "paddock.messages.v1"

// validate refuses a configuration that would listen where peers cannot
// answer, or accept or dial a peer that did not prove who it is.
func (c NodeConfig) validate() error {
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil || port == "" || port == "0" || host == "" || net.ParseIP(host).IsUnspecified() {
		return &paddock.InvalidError{Detail: fmt.Sprintf("remote config: address %q is not a concrete host:port peers can reach", c.Addr)}
	}
	t := c.TLS
	switch {
	case t == nil:
		return &paddock.InvalidError{Detail: "remote config: no TLS: nodes authenticate each other with mutual TLS"}
	case len(t.Certificates) == 0 && t.GetCertificate == nil:
		return &paddock.InvalidError{Detail: "remote config: TLS without the node's certificate"}
	case t.ClientCAs == nil || t.RootCAs == nil:
		return &paddock.InvalidError{Detail: "remote config: TLS needs RootCAs and ClientCAs (the authority peers' certificates come from)"}
	case t.ClientAuth != tls.RequireAndVerifyClientCert:
		return &paddock.InvalidError{Detail: "remote config: TLS must require and verify peers' certificates (tls.RequireAndVerifyClientCert)"}
	case t.InsecureSkipVerify:
		return &paddock.InvalidError{Detail: "remote config: TLS must verify peers (InsecureSkipVerify is set)"}
	}
	switch {
	case c.BufferSize < 0 || c.MaxMessage < 0 || c.QueueBytes < 0 || c.HandshakeTimeout < 0 || c.MaxPending < 0 || c.MaxPendingPerSource < 0:
		return &paddock.InvalidError{Detail: "remote config: a negative size, count or timeout"}
	case c.BufferSize < 2*c.MaxMessage:
		return &paddock.InvalidError{Detail: "remote config: BufferSize must be at least twice MaxMessage"}
	case c.QueueBytes < c.MaxMessage:
		return &paddock.InvalidError{Detail: "remote config: QueueBytes must hold one MaxMessage"}
	}
	return nil
}

// withDefaults fills the zero sizes.
func (c NodeConfig) withDefaults() NodeConfig {
	c.BufferSize = cmp.Or(c.BufferSize, DefaultBufferSize)
	c.MaxMessage = cmp.Or(c.MaxMessage, DefaultMaxMessage)
	c.QueueBytes = cmp.Or(c.QueueBytes, DefaultQueueBytes)
	c.HandshakeTimeout = cmp.Or(c.HandshakeTimeout, DefaultHandshakeTimeout)
	c.MaxPending = cmp.Or(c.MaxPending, DefaultMaxPending)
	c.MaxPendingPerSource = cmp.Or(c.MaxPendingPerSource, DefaultMaxPendingPerSource)
	return c
}

// Node is an actor engine on the network: run the runtime on it with
// actors.Config.Engine.
type Node struct {
	Engine *actor.Engine

	cfg      NodeConfig
	tls      *tls.Config
	log      zerolog.Logger
	dropped  atomic.Uint64   // messages this node could not send
	refused  atomic.Uint64   // messages peers sent that were not delivered
	life     context.Context // ends when the node stops
	stop     context.CancelFunc
	stopOnce sync.Once
	wg       sync.WaitGroup // the links

	stopListening context.CancelFunc
	listening     sync.WaitGroup
	gate          *gate // the listener, once the engine started it

	mu    sync.Mutex
	links map[string]*link

	faults atomic.Pointer[func(*hremote.Envelope) bool] // tests: true drops the batch
}

// StartNode starts an engine reachable at cfg.Addr by peers with
// certificates from cfg's authority.
func StartNode(cfg NodeConfig) (*Node, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	tlsConfig := cfg.TLS.Clone()
	if tlsConfig.MinVersion < tls.VersionTLS13 {
		tlsConfig.MinVersion = tls.VersionTLS13
	}
	n := &Node{cfg: cfg, tls: tlsConfig, log: cfg.Logger, links: map[string]*link{}}
	n.life, n.stop = context.WithCancel(context.Background())
	e, err := actor.NewEngine(actor.NewEngineConfig().WithRemote(outbound{n}))
	if err != nil {
		n.stop()
		return nil, &paddock.UnavailableError{Detail: "remote: starting the engine: " + err.Error()}
	}
	n.Engine = e
	return n, nil
}

// Addr is the address peers reach the node at.
func (n *Node) Addr() string { return n.cfg.Addr }

// Dropped counts the messages this node could not send: to an unreachable
// peer, over a full queue, lost with a connection, or refused outright.
func (n *Node) Dropped() uint64 { return n.dropped.Load() }

// Refused counts the messages peers sent this node that it did not
// deliver: not of package messages, undecodable, or malformed batches.
func (n *Node) Refused() uint64 { return n.refused.Load() }

// Stop stops listening and sending and waits until both are gone. Shut
// the runtime on the node down first. It is idempotent.
func (n *Node) Stop() {
	n.stopOnce.Do(func() {
		if n.stopListening != nil {
			n.stopListening()
			n.listening.Wait()
		}
		n.stop()
		n.mu.Lock()
		for _, l := range n.links {
			l.cut()
		}
		n.mu.Unlock()
		n.wg.Wait()
	})
}

// Allowed reports whether msg may cross the wire: a non-nil message of
// package messages.
func Allowed(msg any) bool {
	m, ok := msg.(proto.Message)
	if !ok || m == nil || !m.ProtoReflect().IsValid() {
		return false
	}
	return m.ProtoReflect().Descriptor().ParentFile().Package() == protocol
}

// Send sends msg to pid from sender (nil: none) once it is allowed to
// cross; anything else is refused with an invalid error and never reaches
// the remote layer.
func Send(e *actor.Engine, pid *actor.PID, msg any, sender *actor.PID) error {
	if pid == nil {
		return &paddock.InvalidError{Detail: "remote: no target"}
	}
	if !Allowed(msg) {
		return &paddock.InvalidError{Detail: fmt.Sprintf("remote: %T is not a message of package messages", msg)}
	}
	e.SendWithSender(pid, msg, sender)
	return nil
}
