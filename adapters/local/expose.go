package local

import (
	"context"
	"net"
	"strconv"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/preview"
)

var _ paddock.Exposer = (*Adapter)(nil)

// exposure is the adapter's previews (Expose, Revoke, Previews,
// PreviewBootstrap), served by its own proxy: it reaches a port on the
// sandbox's own loopback, inside its network namespace when isolated.
type exposure = preview.Exposure

// DialPort opens a connection to port on the sandbox's loopback: in the
// network namespace of its machine when it has one of its own, else on
// this host's loopback, which its commands share.
func (a *Adapter) DialPort(ctx context.Context, sandbox string, port int) (net.Conn, error) {
	m, err := a.readMeta(sandbox)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if isolated, _ := a.Isolated(); isolated && m.Egress != egressUnrestricted {
		mc, err := a.machineFor(a.dirOf(sandbox), m) // never the host's loopback
		if err != nil {
			return nil, err
		}
		return dialInNetwork(ctx, mc.pid, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// newPreviews sets up the preview service.
func (a *Adapter) newPreviews() error {
	svc, err := preview.NewService(preview.ServiceConfig{BaseURL: a.previewBase, Key: a.previewKey, Dial: a.DialPort, Logger: a.log})
	if err != nil {
		return &paddock.InvalidError{Detail: "local: " + err.Error()}
	}
	a.exposure, a.previewKey = preview.NewExposure(svc, func(_ context.Context, name string) error {
		_, err := a.readMeta(name)
		return err
	}, "Config.PreviewBaseURL"), nil
	return nil
}
