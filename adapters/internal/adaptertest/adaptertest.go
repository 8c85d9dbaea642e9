// Package adaptertest is what the adapters' own test suites share: raw
// calls to a provider's API, and the scaffolding every suite repeats.
package adaptertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Caller makes raw calls to a provider's API at base, authorised by the
// header name: value (what the tests use to make a sandbox outside
// Paddock). A call answers the status and the body; a transport failure
// fails the test.
func Caller(t testing.TB, base, name, value string) func(method, path, body string) (int, []byte) {
	return func(method, path, body string) (int, []byte) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set(name, value)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, data
	}
}

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
