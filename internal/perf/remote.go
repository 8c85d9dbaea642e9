package perf

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/remote"
	"github.com/paddockhq/paddock/adapters/remote/remotetest"
)

// RemoteRates are MB/s of one stream's chunks reaching a FrameStream:
// through one runtime, and from a runtime on another node (two nodes in
// this process on loopback, mutual TLS) through a runtime over the
// remote adapter.
type RemoteRates struct{ Local, Remote float64 }

// loopbackNode starts a node on a free loopback port with cert.
func loopbackNode(ca *remotetest.Authority) (*remote.Node, error) {
	cert, err := ca.Issue("127.0.0.1")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return nil, err
	}
	return remote.StartNode(remote.NodeConfig{Addr: addr, TLS: ca.Mutual(cert)})
}

// remoteStreamGoal is the floor of the remote stream against one runtime:
// across nodes every frame is encoded, encrypted, sent over TCP, decrypted,
// decoded, and passes a second runtime (the proxy's), where one runtime
// hands a pointer over; hollywood's own remote measured about 0.37 of one
// engine for 32 KiB frames here, before any of our work. It moves between
// 0.11 and 0.16 from run to run here.
const remoteStreamGoal = 0.07

// RemoteStream measures runs streams of chunks of size each way.
func RemoteStream(chunks, size, runs int) (RemoteRates, error) {
	ca, err := remotetest.NewAuthority("paddock bench")
	if err != nil {
		return RemoteRates{}, err
	}
	serving, err := loopbackNode(ca)
	if err != nil {
		return RemoteRates{}, err
	}
	defer serving.Stop()
	driving, err := loopbackNode(ca)
	if err != nil {
		return RemoteRates{}, err
	}
	defer driving.Stop()
	hose := NewHose(chunks, size)
	local, h, stopLocal, err := startRuntime("fake", hose, func(c *actors.Config) { c.Engine = serving.Engine; c.Lease = -1 })
	if err != nil {
		return RemoteRates{}, err
	}
	defer stopLocal()
	ctx := context.Background()
	a, err := remote.New(remote.Config{Node: driving, Peer: serving.Addr(), Provider: "fake"})
	if err != nil {
		return RemoteRates{}, err
	}
	defer a.Close()
	far, _, stopFar, err := startRuntime("fake", a, func(c *actors.Config) { c.Engine = driving.Engine; c.Lease = -1 })
	if err != nil {
		return RemoteRates{}, err
	}
	defer stopFar()
	measure := func(rt *actors.Runtime) (time.Duration, error) {
		start := time.Now()
		s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.NewCmd("firehose"), paddock.SpawnOpts{})
		if err != nil {
			return 0, err
		}
		bytes := 0
		for f := range s.(*actors.FrameStream).C() {
			if _, ok := f.(interface{ GetData() []byte }); ok {
				bytes += len(f.(interface{ GetData() []byte }).GetData())
			}
		}
		if bytes != chunks*size {
			return 0, fmt.Errorf("%d bytes arrived of %d", bytes, chunks*size)
		}
		return time.Since(start), nil
	}
	var near, away time.Duration
	for range runs {
		d, err := measure(local)
		if err != nil {
			return RemoteRates{}, err
		}
		near += d
		if d, err = measure(far); err != nil {
			return RemoteRates{}, err
		}
		away += d
	}
	mbps := func(d time.Duration) float64 { return float64(chunks*size*runs) / d.Seconds() / (1 << 20) }
	return RemoteRates{Local: mbps(near), Remote: mbps(away)}, nil
}

// RemoteStreamFigure is RemoteStream as a figure: remote/one-engine.
func RemoteStreamFigure(chunks, size, runs int) (Figure, error) {
	r, err := RemoteStream(chunks, size, runs)
	if err != nil {
		return Figure{}, err
	}
	f := Figure{Name: fmt.Sprintf("stream of %d KiB chunks from another node vs one runtime", size>>10), Unit: "remote/one-runtime",
		Value:    r.Remote / r.Local,
		Measured: fmt.Sprintf("%.0f vs %.0f MB/s", r.Remote, r.Local),
		Details:  map[string]float64{"remote_mb_per_s": r.Remote, "local_mb_per_s": r.Local}}
	atLeast(&f, remoteStreamGoal)
	return f, nil
}
