package adaptertest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/filecheck"
	"github.com/paddockhq/paddock/adapters/internal/stubserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hidden asserts that secret shows in no printed form of values (%v, %+v,
// %#v, String) and in none of their JSON.
func Hidden(t testing.TB, secret string, values ...any) {
	t.Helper()
	for _, v := range values {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		forms := []string{fmt.Sprintf("%v", v), fmt.Sprintf("%+v", v), fmt.Sprintf("%#v", v), string(b)}
		if str, ok := v.(fmt.Stringer); ok {
			forms = append(forms, str.String())
		}
		for _, s := range forms {
			assert.NotContains(t, s, secret, "%T", v)
		}
	}
}

// Answered asserts a call's outcome in a fault table: with kind nil, no
// error and want; else an error of kind whose text holds detail and not
// secret.
func Answered(t testing.TB, got string, err error, want string, kind error, detail, secret string) {
	t.Helper()
	if kind == nil {
		require.NoError(t, err)
		assert.Equal(t, want, got)
		return
	}
	require.Error(t, err, "answered %q", got)
	require.ErrorIs(t, err, kind)
	assert.Contains(t, err.Error(), detail)
	assert.NotContains(t, err.Error(), secret)
}

// Counter is a loopback server's count of the requests of a route.
type Counter interface{ Count(route string) int }

// Sends notes srv's counts of the routes in want; the check it answers
// asserts that each got want's number of requests since.
func Sends(t testing.TB, srv Counter, want map[string]int) (check func()) {
	before := map[string]int{}
	for route := range want {
		before[route] = srv.Count(route)
	}
	return func() {
		t.Helper()
		for route, n := range want {
			assert.Equal(t, n, srv.Count(route)-before[route], "requests to %s", route)
		}
	}
}

// New is newAdapter(cfg), an adapter's New, failing the test on an error.
func New[C, A any](t testing.TB, newAdapter func(C) (A, error), cfg C) A {
	t.Helper()
	a, err := newAdapter(cfg)
	require.NoError(t, err)
	return a
}

// Requester is a loopback server's log of the requests it received.
type Requester interface{ Requests() []stubserver.Request }

// NeedsCredential asserts that a, built without its credential, refuses
// a Create with denied and sends srv nothing.
func NeedsCredential(t testing.TB, a paddock.Adapter, srv Requester) {
	t.Helper()
	_, err := a.Create(context.Background(), "box", paddock.CreateOpts{})
	require.ErrorIs(t, err, paddock.ErrDenied)
	assert.Empty(t, srv.Requests(), "nothing is sent without a credential")
}

// StreamsFiles writes a 256 MiB file to path in h through a and reads it
// back: the bytes must be the same, and the heap of the whole process
// (adapter and loopback server together) must grow by less than 32 MiB
// meanwhile, as files are streamed, never held whole. The heap is the
// process's: the calling test must not run in parallel.
func StreamsFiles(t testing.TB, ctx context.Context, a paddock.Adapter, h paddock.Handle, path string) {
	t.Helper()
	const size, bound = 256 << 20, 32 << 20
	res, err := filecheck.RoundTrip(size,
		func(r io.Reader) error { return a.WriteFile(ctx, h, path, 0o644, r) },
		func() (io.ReadCloser, error) { return a.ReadFile(ctx, h, path) })
	require.NoError(t, err)
	assert.Equal(t, int64(size), res.Read)
	assert.True(t, res.Same, "the same bytes came back")
	t.Logf("256 MiB round trip: heap in use grew by at most %.1f MiB", float64(res.HeapGrowth)/(1<<20))
	assert.Less(t, res.HeapGrowth, int64(bound), "streamed, never held whole")
}

// NeedsTools skips t when one of the programs is not on this machine's
// PATH, but fails it under CI (CI set in the environment), which installs
// every program the tests need: there a missing tool is a broken setup,
// never a skipped check.
func NeedsTools(t testing.TB, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI installs %s, which this test runs", p)
			}
			t.Skipf("this test runs %s, which is not on PATH here", p)
		}
	}
}

// Content reads the whole file path of h through a.
func Content(t testing.TB, a paddock.Adapter, h paddock.Handle, path string) string {
	t.Helper()
	rc, err := a.ReadFile(context.Background(), h, path)
	require.NoError(t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return string(b)
}
