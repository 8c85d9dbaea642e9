// Package remote puts a Paddock runtime's engine on the network, for
// owners and runtimes on other machines, over hollywood's remote layer
// (docs/contract.md#remote). Two rules hold on every node: peers
// authenticate each other with mutual TLS (a node without a certificate
// from the configured authority can neither send a request nor receive a
// frame), and only messages of package messages cross the wire (anything
// else is refused before it reaches the remote layer, which would crash
// the process on it).
package remote

import (
	"crypto/tls"
	"fmt"
	"net"

	"github.com/anthdm/hollywood/actor"
	hremote "github.com/anthdm/hollywood/remote"
	"github.com/paddockhq/paddock"
	"google.golang.org/protobuf/proto"
)

// DefaultBufferSize is the largest batch a node accepts from a peer:
// hollywood's writer sends whatever is queued as one batch, and a batch
// over the reader's limit resets the connection and is lost whole.
const DefaultBufferSize = 64 << 20

// Config configures a node's remote layer.
type Config struct {
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
	// DefaultBufferSize. Every node of a deployment needs the same.
	BufferSize int
}

// protocol is the protobuf package of the messages that may cross.
const protocol = "paddock.messages.v1"

// validate refuses a configuration that would listen where peers cannot
// answer, or accept or dial a peer that did not prove who it is.
func (c Config) validate() error {
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
	if c.BufferSize < 0 {
		return &paddock.InvalidError{Detail: "remote config: negative buffer size"}
	}
	return nil
}

// Node is an actor engine on the network: run the runtime on it with
// actors.Config.Engine.
type Node struct {
	Engine *actor.Engine
	remote *hremote.Remote
}

// Start starts an engine reachable at cfg.Addr by peers with certificates
// from cfg's authority.
func Start(cfg Config) (*Node, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.BufferSize == 0 {
		cfg.BufferSize = DefaultBufferSize
	}
	tlsConfig := cfg.TLS.Clone()
	if tlsConfig.MinVersion < tls.VersionTLS13 {
		tlsConfig.MinVersion = tls.VersionTLS13
	}
	r := hremote.New(cfg.Addr, hremote.NewConfig().WithTLS(tlsConfig).WithBufferSize(cfg.BufferSize))
	e, err := actor.NewEngine(actor.NewEngineConfig().WithRemote(r))
	if err != nil {
		return nil, &paddock.UnavailableError{Detail: "remote: starting the engine: " + err.Error()}
	}
	return &Node{Engine: e, remote: r}, nil
}

// Addr is the address peers reach the node at.
func (n *Node) Addr() string { return n.remote.Address() }

// Stop stops listening and waits until the listener is gone. Shut the
// runtime on the node down first.
func (n *Node) Stop() { n.remote.Stop().Wait() }

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
