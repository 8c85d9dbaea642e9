package remoteexample

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/paddockhq/paddock/adapters/remote"
	"github.com/paddockhq/paddock/messages"
)

// Serve runs a node at addr whose runtime serves the local provider
// (sandboxes under root) to other nodes with certificates from the
// authority in certs, until ctx ends. ready is called once peers can
// connect.
func Serve(ctx context.Context, addr, certs, root string, ready func()) error {
	tlsConfig, err := LoadTLS(certs)
	if err != nil {
		return err
	}
	node, err := remote.StartNode(remote.NodeConfig{Addr: addr, TLS: tlsConfig})
	if err != nil {
		return err
	}
	defer node.Stop()
	adapter, err := local.New(local.Config{Root: root})
	if err != nil {
		return err
	}
	defer adapter.Close()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderLocal: adapter}, Engine: node.Engine})
	if err != nil {
		return err
	}
	ready()
	<-ctx.Done()
	stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return rt.Shutdown(stop)
}

// Drive runs a node at addr that runs argv in the sandbox called box on
// the serving node at peer, streaming its output to out as it comes, and
// returns its exit code.
func Drive(ctx context.Context, addr, peer, certs, box string, argv []string, out io.Writer) (int, error) {
	tlsConfig, err := LoadTLS(certs)
	if err != nil {
		return 0, err
	}
	node, err := remote.StartNode(remote.NodeConfig{Addr: addr, TLS: tlsConfig})
	if err != nil {
		return 0, err
	}
	defer node.Stop()
	// The serving node's local provider, as an adapter of this node.
	adapter, err := remote.New(remote.Config{Node: node, Peer: peer, Provider: paddock.ProviderLocal})
	if err != nil {
		return 0, fmt.Errorf("reaching %s: %w", peer, err)
	}
	defer adapter.Close()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderLocal: adapter}, Engine: node.Engine})
	if err != nil {
		return 0, err
	}
	defer func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(stop)
	}()
	h, err := rt.Adapter(paddock.ProviderLocal).Create(ctx, box, paddock.CreateOpts{})
	if err != nil {
		return 0, err
	}
	// Detachable: a link that loses frames is recovered by re-attaching.
	s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.NewCmd(argv[0], argv[1:]...), paddock.SpawnOpts{Detachable: true})
	if err != nil {
		return 0, err
	}
	defer s.Close()
	for f := range s.(*actors.FrameStream).C() {
		switch f := f.(type) {
		case *messages.Stdout:
			_, _ = out.Write(f.GetData())
		case *messages.Stderr:
			_, _ = out.Write(f.GetData())
		case *messages.Exit:
			return int(f.GetCode()), nil
		case *messages.Error:
			return 0, fmt.Errorf("the command's fate is unknown: %s %s", f.GetReason(), f.GetDetail())
		}
	}
	return 0, fmt.Errorf("the stream ended without a terminal frame")
}
