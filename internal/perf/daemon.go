package perf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/daemon"
)

// DaemonStream streams chunks chunks of size bytes from a command through
// a daemon on loopback (HTTP/2 without TLS) to a Go client, against the
// same command read through the runtime in process, runs times each,
// alternating; it answers both rates (MB/s) and the median ratio.
func DaemonStream(chunks, size, runs int) (through, inProcess, ratio float64, err error) {
	hose := NewHose(chunks, size)
	rt, h, stop, err := startRuntime("fake", hose)
	if err != nil {
		return 0, 0, 0, err
	}
	defer stop()
	srv, err := daemon.New(daemon.Config{Transport: rt.Transport()})
	if err != nil {
		return 0, 0, 0, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, 0, err
	}
	hs := &http.Server{Handler: srv, Protocols: new(http.Protocols), ReadHeaderTimeout: 10 * time.Second, HTTP2: daemon.HTTP2Config()}
	hs.Protocols.SetUnencryptedHTTP2(true)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	defer func() {
		_ = hs.Close()
		<-served
	}()
	tr := &http.Transport{Protocols: new(http.Protocols), HTTP2: daemon.HTTP2Config()}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	dt, err := daemon.Dial("http://"+ln.Addr().String(), daemon.DialOptions{HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		return 0, 0, 0, err
	}
	remote, local := client.New(dt, h.Provider), rt.Adapter(h.Provider)
	drain := func(a paddock.Adapter) (time.Duration, error) {
		ctx := context.Background()
		start := time.Now()
		st, err := a.Spawn(ctx, h, paddock.NewCmd("firehose"), paddock.SpawnOpts{})
		if err != nil {
			return 0, err
		}
		defer st.Close()
		n := 0
		for {
			ev, err := st.Next(ctx)
			if err != nil {
				return 0, err
			}
			if ev.Kind.Terminal() {
				if ev.Kind != paddock.EventExit || n != chunks*size {
					return 0, fmt.Errorf("the stream ended %v after %d of %d bytes", ev, n, chunks*size)
				}
				return time.Since(start), nil
			}
			n += len(ev.Data)
		}
	}
	var tThrough, tIn time.Duration
	ratios := make([]float64, 0, runs)
	for run := range runs + 1 { // run 0 warms up and is not counted
		d, err1 := drain(remote)
		l, err2 := drain(local)
		if err := errors.Join(err1, err2); err != nil {
			return 0, 0, 0, err
		}
		if run == 0 {
			continue
		}
		tThrough, tIn = tThrough+d, tIn+l
		ratios = append(ratios, l.Seconds()/d.Seconds())
	}
	mbps := func(d time.Duration) float64 { return float64(chunks*size*runs) / d.Seconds() / (1 << 20) }
	return mbps(tThrough), mbps(tIn), median(ratios), nil
}

// DaemonStreamFigure is DaemonStream as a figure: daemon/in-process,
// printed with no goal yet (the goal is 0.5; measured 0.26-0.27
// here: every byte is copied by the frame's marshal, HTTP/2's buffers on
// both sides and the unmarshal, with server, client and command sharing
// two cores).
func DaemonStreamFigure(chunks, size, runs int) (Figure, error) {
	through, in, ratio, err := DaemonStream(chunks, size, runs)
	if err != nil {
		return Figure{}, err
	}
	f := Figure{Name: fmt.Sprintf("%d MiB in %d KiB chunks through paddockd vs the runtime in process", chunks*size>>20, size>>10),
		Unit: "daemon/in-process", Value: ratio, Measured: fmt.Sprintf("%.0f vs %.0f MB/s", through, in),
		Details: map[string]float64{"daemon_mb_per_s": through, "in_process_mb_per_s": in}}
	f.NoGoal = "at 0.26-0.27 here, under the 0.5 it aims at: the bytes are copied four times between the command and the client"
	return f, nil
}
