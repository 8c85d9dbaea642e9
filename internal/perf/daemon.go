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
// alternating; it answers both rates (MB/s) and the median ratio. The
// command is the fake's hose: it costs nothing, so the figure is the
// daemon's own cost.
func DaemonStream(chunks, size, runs int) (through, inProcess, ratio float64, err error) {
	return daemonStream(paddock.ProviderFake, NewHose(chunks, size), paddock.NewCmd("firehose"), int64(chunks*size), runs)
}

// DaemonLocalStream is DaemonStream with a command of the local adapter
// as the source, writing chunks chunks of size bytes (dd): what an
// orchestrator sees of paddockd serving the local provider.
func DaemonLocalStream(chunks, size, runs int) (through, inProcess, ratio float64, err error) {
	a, done, err := newLocal(Unisolated)
	if err != nil {
		return 0, 0, 0, err
	}
	defer done()
	cmd := paddock.NewCmd("dd", "if=/dev/zero", fmt.Sprint("bs=", size), fmt.Sprint("count=", chunks), "status=none")
	return daemonStream(paddock.ProviderLocal, a, cmd, int64(chunks)*int64(size), runs)
}

// daemonStream measures cmd on a's sandbox writing total bytes, through a
// daemon and in process (DaemonStream).
func daemonStream(p paddock.Provider, a paddock.Adapter, cmd paddock.Cmd, total int64, runs int) (through, inProcess, ratio float64, err error) {
	rt, h, stop, err := startRuntime(p, a)
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
		st, err := a.Spawn(ctx, h, cmd, paddock.SpawnOpts{})
		if err != nil {
			return 0, err
		}
		defer st.Close()
		var n int64
		for {
			ev, err := st.Next(ctx)
			if err != nil {
				return 0, err
			}
			if ev.Kind.Terminal() {
				if ev.Kind != paddock.EventExit || n != total {
					return 0, fmt.Errorf("the stream ended %v after %d of %d bytes", ev, n, total)
				}
				return time.Since(start), nil
			}
			n += int64(len(ev.Data))
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
	mbps := func(d time.Duration) float64 { return float64(total) * float64(runs) / d.Seconds() / (1 << 20) }
	return mbps(tThrough), mbps(tIn), median(ratios), nil
}

// DaemonStreamFigures are the two streams through paddockd as figures:
// from a local command (goal >= 0.5 of the runtime in process), and from
// the fake's hose, the daemon's own cost, printed without a goal.
func DaemonStreamFigures(chunks, size, runs int) ([]Figure, error) {
	figure := func(source string, measure func(chunks, size, runs int) (float64, float64, float64, error)) (Figure, error) {
		through, in, ratio, err := measure(chunks, size, runs)
		if err != nil {
			return Figure{}, err
		}
		return Figure{Name: fmt.Sprintf("%d MiB in %d KiB chunks from %s through paddockd vs the runtime in process", chunks*size>>20, size>>10, source),
			Unit: "daemon/in-process", Value: ratio, Measured: fmt.Sprintf("%.0f vs %.0f MB/s", through, in),
			Details: map[string]float64{"daemon_mb_per_s": through, "in_process_mb_per_s": in}}, nil
	}
	local, err := figure("a local command", DaemonLocalStream)
	if err != nil {
		return nil, err
	}
	// The daemon moves 880-950 MB/s of it here whatever the source (its own
	// cost: the hose's row); the runtime in process rose from 1.4-1.5 to
	// 2.1-2.2 GB/s when the local adapter's reader stopped copying, so
	// the ratio fell from 0.58-0.73 to 0.40-0.41. The floor catches a
	// slower daemon; the aim is the ratio it had.
	atLeast(&local, 0.33)
	aimAtLeast(&local, 0.5)
	hose, err := figure("a source that costs nothing", DaemonStream)
	if err != nil {
		return nil, err
	}
	hose.NoGoal = "the daemon's own cost, at 0.27-0.32 here: in process the frames are handed over with no copy; through paddockd every byte is copied by the frame's marshal, HTTP/2's framing and buffers on both sides and the unmarshal, with server and client sharing two cores"
	return []Figure{local, hose}, nil
}
