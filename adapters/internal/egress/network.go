package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/paddockhq/paddock"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Network is how the gates of an adapter's sandboxes reach the network:
// the Egress field of the adapters that enforce policies themselves. Zero
// fields take the defaults.
type Network struct {
	// Resolve answers the addresses of an allowed name (default: the
	// system's resolver).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an address (default: a net.Dialer).
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// MaxConns bounds the connections one sandbox has open through its
	// proxy at once; 0 = DefaultMaxConns (256). One more is answered 503.
	MaxConns int
	// Registerer, when set, takes paddock_egress_connections_total
	// {provider, verdict}: the proxies' decisions.
	Registerer prometheus.Registerer
}

// Config checks n and returns the configuration of provider's gates,
// logging to log and counting verdicts in n.Registerer.
func (n Network) Config(provider paddock.Provider, log zerolog.Logger) (Config, error) {
	if n.MaxConns < 0 {
		return Config{}, &paddock.InvalidError{Detail: string(provider) + ": the egress connection bound must not be negative"}
	}
	cfg := Config{Resolve: n.Resolve, Dial: n.Dial, MaxConns: n.MaxConns, Logger: log}
	if n.Registerer != nil {
		verdict, err := Verdicts(n.Registerer, string(provider))
		if err != nil {
			return Config{}, fmt.Errorf("%s: egress metrics: %w", provider, err)
		}
		cfg.Verdict = verdict
	}
	return cfg, nil
}

// Port is where, inside a sandbox, its proxy listens (on 127.0.0.1).
const Port = 3128

// ProxyEnv tells a sandbox's commands to go out by the proxy on Port and
// to reach their own loopback directly: the variables curl, git, pip, npm
// and go read, in both cases.
var ProxyEnv = func() []string {
	proxy := "http://127.0.0.1:" + strconv.Itoa(Port)
	local := "localhost,127.0.0.1,::1"
	return []string{"HTTP_PROXY=" + proxy, "HTTPS_PROXY=" + proxy, "http_proxy=" + proxy, "https_proxy=" + proxy,
		"NO_PROXY=" + local, "no_proxy=" + local}
}()
