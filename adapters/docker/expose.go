package docker

import (
	"context"
	"net"
	"strconv"

	"github.com/paddockhq/paddock/preview"
)

// exposure is the adapter's previews (Expose, Revoke, Previews,
// PreviewBootstrap), served by its own proxy: it reaches a sandbox's port
// through the engine, so previews work with no network at all.
type exposure = preview.Exposure

// DialPort opens a connection to port on the sandbox's loopback through
// one exec relaying stdin and stdout (nc inside the sandbox).
func (a *Adapter) DialPort(ctx context.Context, sandbox string, port int) (net.Conn, error) {
	return a.relay(ctx, sandbox, execSpec{cmd: sh(scriptDial, strconv.Itoa(port)), stdin: true})
}
