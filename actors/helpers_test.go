package actors_test

import (
	"bytes"
	"context"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

// startFake starts a runtime over a fresh fake, stopped when the test ends.
func startFake(t testing.TB, cfg ...func(*actors.Config)) (*actors.Runtime, *fake.Adapter) {
	t.Helper()
	f := fake.New()
	c := actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: f}}
	for _, fn := range cfg {
		fn(&c)
	}
	rt, err := actors.Start(c)
	require.NoError(t, err)
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := rt.Shutdown(sctx); err != nil {
			var buf bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
			t.Fatalf("shutdown: %v\n%s", err, buf.String())
		}
		f.Reset()
	})
	return rt, f
}

// frame waits up to a second for the stream's next frame.
func frame(t testing.TB, s *actors.FrameStream) messages.Frame {
	t.Helper()
	select {
	case f, ok := <-s.C():
		require.True(t, ok, "the stream closed")
		return f
	case <-time.After(time.Minute):
		require.FailNow(t, "no frame within 5s")
	}
	return nil
}

// all reads every frame until the channel closes.
func all(t testing.TB, s *actors.FrameStream) []messages.Frame {
	t.Helper()
	var out []messages.Frame
	for {
		select {
		case f, ok := <-s.C():
			if !ok {
				return out
			}
			out = append(out, f)
		case <-time.After(time.Minute):
			require.FailNow(t, "the stream did not end within 5s")
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// spawn starts cmd through the runtime's adapter: its stream is a
// FrameStream, whose frames the tests read.
func spawn(rt *actors.Runtime, ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts) (*actors.FrameStream, error) {
	st, err := rt.Adapter(h.Provider).Spawn(ctx, h, cmd, opts)
	if err != nil {
		return nil, err
	}
	return st.(*actors.FrameStream), nil
}

// attach rejoins a session through the runtime's adapter.
func attach(rt *actors.Runtime, ctx context.Context, h paddock.Handle, id string, opts paddock.AttachOpts) (*actors.FrameStream, error) {
	st, err := rt.Adapter(h.Provider).Attach(ctx, h, id, opts)
	if err != nil {
		return nil, err
	}
	return st.(*actors.FrameStream), nil
}
