package fake_test

import (
	"context"
	"errors"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/fake"
	"github.com/stretchr/testify/require"
)

// world returns a fresh fake, reset when the test ends.
func world(t *testing.T) *fake.Adapter {
	a := fake.New()
	t.Cleanup(a.Reset)
	return a
}

// box creates a sandbox called name in a.
func box(t *testing.T, a *fake.Adapter, name string) paddock.Handle {
	h, err := a.Create(context.Background(), name, paddock.CreateOpts{})
	require.NoError(t, err)
	return h
}

// script spawns the instructions as a fake command.
func script(t *testing.T, a *fake.Adapter, h paddock.Handle, instrs ...string) paddock.Stream {
	st, err := a.Spawn(context.Background(), h, paddock.NewCmd("emit", instrs...), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// next waits for one event (a minute bounds a hang).
func next(t *testing.T, st paddock.Stream) paddock.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ev, err := st.Next(ctx)
	require.NoError(t, err)
	return ev
}

// drain reads events until io.EOF and returns them.
func drain(t *testing.T, st paddock.Stream) []paddock.Event {
	t.Helper()
	var evs []paddock.Event
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		ev, err := st.Next(ctx)
		cancel()
		if errors.Is(err, io.EOF) {
			return evs
		}
		require.NoError(t, err, "after %d events", len(evs))
		evs = append(evs, ev)
	}
}

// requireQuiet requires no event within 50ms while the stream stays open.
func requireQuiet(t *testing.T, st paddock.Stream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	ev, err := st.Next(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "unexpected %v", ev)
}

// text renders events compactly for comparisons.
func text(evs []paddock.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		switch ev.Kind {
		case paddock.EventStdout, paddock.EventStderr:
			out[i] = ev.Kind.String() + ":" + string(ev.Data)
		case paddock.EventExit:
			out[i] = "exit:" + strconv.Itoa(ev.Code)
		case paddock.EventError:
			out[i] = "error:" + ev.Err.Error()
		}
	}
	return out
}

// fakeWith returns a fake advertising only caps.
func fakeWith(t *testing.T, caps ...paddock.Capability) *fake.Adapter {
	a := fake.New(fake.WithCapabilities(paddock.NewCapabilitySet(caps...)))
	t.Cleanup(a.Reset)
	return a
}
