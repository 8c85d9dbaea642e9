//go:build unix

package local_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/local"
	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

// box creates a sandbox.
func box(t testing.TB, a *local.Adapter, name string, params ...string) paddock.Handle {
	t.Helper()
	opts := paddock.CreateOpts{}
	if len(params) == 2 {
		opts.Params = map[string]string{params[0]: params[1]}
	}
	h, err := a.Create(ctx, name, opts)
	require.NoError(t, err)
	return h
}

// sh spawns `sh -c script`.
func sh(t testing.TB, a paddock.Adapter, h paddock.Handle, script string, opts paddock.SpawnOpts) paddock.Stream {
	t.Helper()
	st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", script), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// events reads a stream to its end, within d.
func events(t testing.TB, st paddock.Stream, d time.Duration) []paddock.Event {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var out []paddock.Event
	for {
		ev, err := st.Next(c)
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err, "after %d events", len(out))
		out = append(out, ev)
	}
}

// stdout joins the stdout of events; terminal renders the last one.
func stdout(evs []paddock.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Kind == paddock.EventStdout {
			b.Write(ev.Data)
		}
	}
	return b.String()
}

func terminal(evs []paddock.Event) string {
	if len(evs) == 0 {
		return "none"
	}
	ev := evs[len(evs)-1]
	switch ev.Kind {
	case paddock.EventExit:
		return "exit:" + itoa(ev.Code)
	case paddock.EventError:
		return "error:" + ev.Err.Error()
	}
	return "not terminal"
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// execOut runs a script with Exec and returns its output.
func execOut(t testing.TB, a paddock.Adapter, h paddock.Handle, script string) (string, int) {
	t.Helper()
	res, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", script), paddock.ExecOpts{})
	require.NoError(t, err)
	return string(res.Stdout), res.ExitCode
}

// next waits for one event.
func next(t testing.TB, st paddock.Stream) paddock.Event {
	t.Helper()
	// A bound on a hang, not a measure of speed: the package's tests run
	// in parallel under -race on two cores, one of them streaming 1 GiB.
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ev, err := st.Next(c)
	require.NoError(t, err)
	return ev
}

func contextCancelled() (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(ctx)
	cancel()
	return c, cancel
}

func contextTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

func readSessionRecord(t testing.TB, a *local.Adapter, h paddock.Handle, id string) local.SessionRecord {
	t.Helper()
	rec, err := a.ReadSessionRecord(h, id)
	require.NoError(t, err)
	return rec
}

func countByRecord(rec local.SessionRecord) int { return local.CountMembers(rec) }

// startRuntime runs a runtime over a, shut down when the test ends.
func startRuntime(t testing.TB, a paddock.Adapter) *actors.Runtime {
	t.Helper()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{a.Provider(): a}})
	require.NoError(t, err)
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		require.NoError(t, rt.Shutdown(c))
	})
	return rt
}
