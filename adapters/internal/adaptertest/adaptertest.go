// Package adaptertest is what the adapters' own test suites share: raw
// calls to a provider's API, and the scaffolding every suite repeats.
package adaptertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
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

// Drain reads st to its terminal event within limit: the stdout and
// stderr before it, and the event. A failed Next fails the test.
func Drain(t testing.TB, st paddock.Stream, limit time.Duration) (stdout, stderr string, last paddock.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	for {
		ev, err := st.Next(ctx)
		require.NoError(t, err)
		switch ev.Kind {
		case paddock.EventStdout:
			stdout += string(ev.Data)
		case paddock.EventStderr:
			stderr += string(ev.Data)
		default:
			return stdout, stderr, ev
		}
	}
}

// StdoutUntil reads st until its stdout holds want, within limit, and
// answers that stdout; stderr may come between, anything else fails the
// test.
func StdoutUntil(t testing.TB, st paddock.Stream, want string, limit time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var got string
	for !strings.Contains(got, want) {
		ev, err := st.Next(ctx)
		require.NoError(t, err, "waiting for %q, got %q", want, got)
		require.Contains(t, []paddock.EventKind{paddock.EventStdout, paddock.EventStderr}, ev.Kind, "waiting for %q, got %v", want, ev)
		if ev.Kind == paddock.EventStdout {
			got += string(ev.Data)
		}
	}
	return got
}

// Summary reads st to its end for a fault table: after an exit,
// "stdout|stderr|code" (and nothing may follow the exit); after an error
// event, "stdout|stderr" and the event's error; a stream that ends
// without either is an error.
func Summary(t testing.TB, st paddock.Stream, limit time.Duration) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var out, errb []byte
	for {
		ev, err := st.Next(ctx)
		switch {
		case errors.Is(err, io.EOF):
			return "", errors.New("the stream ended without a terminal event")
		case err != nil:
			return "", err
		}
		switch ev.Kind {
		case paddock.EventStdout:
			out = append(out, ev.Data...)
		case paddock.EventStderr:
			errb = append(errb, ev.Data...)
		case paddock.EventExit:
			_, err := st.Next(ctx)
			require.ErrorIs(t, err, io.EOF, "nothing follows the exit")
			return string(out) + "|" + string(errb) + "|" + strconv.Itoa(ev.Code), nil
		case paddock.EventError:
			return string(out) + "|" + string(errb), ev.Err
		}
	}
}
