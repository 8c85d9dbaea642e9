package local

import (
	"context"
	"net"
	"net/netip"
	"strconv"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/egress"
	"github.com/prometheus/client_golang/prometheus"
)

// An isolated sandbox's network namespace has only loopback. Unless it was
// made with egress=unrestricted, its init listens on 127.0.0.1:egressPort
// there and hands the listener to the adapter, which serves it with an
// egress.Gate: an HTTP proxy deciding each connection by name under the
// sandbox's network policy (none applied: deny all). Commands are told of
// it by HTTP_PROXY and HTTPS_PROXY; nothing else leaves the namespace.

// egressPort is where, inside a sandbox, the proxy listens.
const egressPort = 3128

// egressProxy is the proxy's URL, as commands are told it.
var egressProxy = "http://127.0.0.1:" + strconv.Itoa(egressPort)

// egressEnv tells a command to go out by the proxy, and to reach its own
// loopback directly.
var egressEnv = []string{
	"HTTP_PROXY=" + egressProxy, "HTTPS_PROXY=" + egressProxy, "http_proxy=" + egressProxy, "https_proxy=" + egressProxy,
	"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
}

// EgressConfig is how a sandbox's proxy reaches the network; zero fields
// take the defaults.
type EgressConfig struct {
	// Resolve answers the addresses of an allowed name (default: the
	// system's resolver).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an address (default: a net.Dialer).
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// MaxConns bounds the connections one sandbox has open through its
	// proxy at once; 0 = egress.DefaultMaxConns (256). One more is
	// answered 503.
	MaxConns int
	// Registerer, when set, takes paddock_egress_connections_total
	// {provider="local", verdict}: the proxies' decisions.
	Registerer prometheus.Registerer
}

// gated reports whether the sandbox m describes goes out by the proxy:
// isolated, without unrestricted egress.
func (a *Adapter) gated(m meta) bool {
	isolated, _ := a.Isolated()
	return isolated && m.Egress != egressUnrestricted
}

// allowOf is a stored policy's allow list (none stored: deny all).
func allowOf(p *paddock.NetworkPolicy) []string {
	if p == nil {
		return nil
	}
	return p.Allow
}

// serveEgress serves mc's egress listener (a registered machine of the
// sandbox name) with a gate under the policy its metadata holds now, until
// the machine ends; under the policy lock, so a policy applied meanwhile
// is not lost.
func (a *Adapter) serveEgress(mc *machine, name string) {
	unlock := a.lockName("policy:" + mc.key)
	defer unlock()
	var allow []string
	if m, err := a.readMeta(name); err == nil {
		allow = allowOf(m.Policy)
	}
	gate := egress.New(egress.Config{Resolve: a.egress.Resolve, Dial: a.egress.Dial, MaxConns: a.egress.MaxConns,
		Verdict: a.verdict, Logger: a.log}, allow)
	mc.gate = gate
	l := mc.egress
	a.gates.Add(2)
	go func() {
		defer a.gates.Done()
		_ = gate.Serve(l)
	}()
	go func() {
		defer a.gates.Done()
		<-mc.done
		_ = l.Close()
		gate.Close()
	}()
}
