package remote

import (
	"cmp"
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/messages"
)

// Defaults of Config.
const (
	DefaultTimeout = 30 * time.Second
	DefaultLease   = 30 * time.Second
	DefaultWindow  = 16
)

// Config configures an Adapter.
type Config struct {
	// Node is this node, whose links carry the adapter's requests.
	Node *Node
	// Peer is the serving node's address (its NodeConfig.Addr).
	Peer string
	// Runtime is the serving runtime's name (actors.Config.Name); "" =
	// "default".
	Runtime string
	// Provider is the serving runtime's provider this adapter drives; the
	// adapter's requests name it whatever tag their handles carry here,
	// and the handles it answers carry it.
	Provider paddock.Provider
	// Timeout bounds a request whose context has no deadline, and the
	// reading of the serving provider's capabilities in New; 0 =
	// DefaultTimeout. A request whose reply the link lost fails with
	// unavailable when it elapses. An exec with a timeout of its own waits
	// that much longer; one without is bounded by Timeout alone.
	Timeout time.Duration
	// Lease is the serving runtime's RemoteLease: a subscription credits
	// its command at least every fifth of it, and reports
	// Error{node_lost} once the serving node was silent for three
	// quarters of it. 0 = DefaultLease.
	Lease time.Duration
	// Window is how many frames a subscription lets its command send
	// ahead of what was read (each at most actors.RemoteFrameMax bytes);
	// 0 = DefaultWindow.
	Window int
}

// withDefaults validates c and fills its zero fields.
func (c Config) withDefaults() (Config, error) {
	if c.Node == nil || c.Peer == "" || c.Provider == "" || c.Timeout < 0 || c.Lease < 0 || c.Window < 0 {
		return c, &paddock.InvalidError{Detail: "remote adapter config: a node, a peer and a provider are required, and no negative timeout, lease or window"}
	}
	c.Runtime = cmp.Or(c.Runtime, "default")
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	c.Lease = cmp.Or(c.Lease, DefaultLease)
	c.Window = cmp.Or(c.Window, DefaultWindow)
	return c, nil
}

// adapters numbers the adapters of this process, so their actors' ids
// never meet.
var adapters atomic.Uint64

// New connects to the runtime at cfg.Peer through cfg.Node and reads what
// its provider advertises, which the adapter then advertises (less any
// capability this node does not know).
func New(cfg Config) (*Adapter, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	t := &transport{n: cfg.Node, cfg: cfg, root: actor.NewPID(cfg.Peer, "paddock/"+cfg.Runtime),
		prefix: "r" + strconv.FormatUint(adapters.Add(1), 10) + "-"}
	t.client = cfg.Node.Engine.SpawnFunc(t.receive, "paddock-remote", actor.WithID(t.prefix+"client"))
	a := &Adapter{Client: client.New(t, cfg.Provider), t: t}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	r, err := client.Send[*messages.CapabilitiesReply](ctx, t, paddock.Handle{Provider: cfg.Provider}, &messages.CapabilitiesRequest{Provider: string(cfg.Provider)})
	if err != nil {
		a.Close()
		return nil, err
	}
	var caps []paddock.Capability
	for _, c := range r.GetCapabilities() {
		if cp := paddock.Capability(c); cp.Known() { // one this node has never heard of cannot be used
			caps = append(caps, cp)
		}
	}
	t.caps = paddock.NewCapabilitySet(caps...)
	return a, nil
}
