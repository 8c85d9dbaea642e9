package local

import (
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/egress"
)

// An isolated sandbox's network namespace has only loopback. Unless it was
// made with egress=unrestricted, its init listens on 127.0.0.1:egress.Port
// there and hands the listener to the adapter, which serves it with an
// egress.Gate: an HTTP proxy deciding each connection by name under the
// sandbox's network policy (none applied: deny all). Commands are told of
// it by HTTP_PROXY and HTTPS_PROXY; nothing else leaves the namespace.

// EgressConfig is how a sandbox's proxy reaches the network; zero fields
// take the defaults. Its metrics are labelled provider="local".
type EgressConfig = egress.Network

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
	gate := egress.New(a.gateConfig, allow)
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
