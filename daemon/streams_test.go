package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/daemon"
	"github.com/paddockhq/paddock/fake"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One client holding 1,000 streams at once is served whole, on one
// connection: each command gets its stdin and ends with its own exit after
// its own output, and once they ended the server holds no goroutine for
// any of them.
func TestAThousandStreamsFromOneClient(t *testing.T) {
	t.Parallel()
	const streams = 1000
	a := fake.New()
	t.Cleanup(a.Reset)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{a.Provider(): a}})
	require.NoError(t, err)
	hs := startServer(t, rt, daemon.Config{Transport: rt.Transport()})
	tr, err := daemon.Dial(hs.URL, daemon.DialOptions{HTTPClient: hs.Client()})
	require.NoError(t, err)
	ad := client.New(tr, paddock.ProviderFake)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang bound
	defer cancel()
	h, err := ad.Create(ctx, "many", paddock.CreateOpts{})
	require.NoError(t, err)

	// One stream first, so what the connection and the runtime keep for
	// good is in the baseline.
	one, err := ad.Spawn(ctx, h, paddock.Cmd{Path: "x", Args: []string{"out:warm"}}, paddock.SpawnOpts{})
	require.NoError(t, err)
	for {
		if _, err := one.Next(ctx); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
	}
	require.NoError(t, one.Close())
	before := runtime.NumGoroutine()

	open := make([]paddock.Stream, streams)
	require.NoError(t, each(streams, func(i int) error {
		s, err := ad.Spawn(ctx, h, paddock.Cmd{Path: "x", Args: []string{fmt.Sprintf("out:%d;", i), "stay"}}, paddock.SpawnOpts{Stdin: true})
		open[i] = s
		return err
	}), "every stream opens while the others are held")
	require.NoError(t, each(streams, func(i int) error {
		s := open[i]
		gctx := ctx
		{
			defer s.Close()
			if err := s.WriteStdin(gctx, []byte("in")); err != nil {
				return err
			}
			if err := s.CloseStdin(gctx); err != nil {
				return err
			}
			var out string
			for {
				ev, err := s.Next(gctx)
				if err != nil {
					return fmt.Errorf("stream %d: %w (after %q)", i, err, out)
				}
				if ev.Kind.Terminal() {
					if ev.Kind != paddock.EventExit || ev.Code != 0 {
						return fmt.Errorf("stream %d: terminal %v %d %v", i, ev.Kind, ev.Code, ev.Err)
					}
					if want := fmt.Sprintf("%d;echo:in", i); out != want {
						return fmt.Errorf("stream %d: output %q, want %q", i, out, want)
					}
					return nil
				}
				out += string(ev.Data)
			}
		}
	}))
	// Nothing of theirs stays: polled, as their goroutines end after the
	// streams' ends reached the client.
	if !assert.Eventually(t, func() bool {
		hs.Client().CloseIdleConnections()
		return runtime.NumGoroutine() <= before
	}, time.Minute, 20*time.Millisecond,
		"goroutines: %d before the 1,000 streams, %d after they ended", before, runtime.NumGoroutine()) {
		buf := make([]byte, 1<<20)
		t.Logf("%s", buf[:runtime.Stack(buf, true)])
	}
}

// each runs f(0) ... f(n-1) at once and returns their errors joined.
func each(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = f(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
