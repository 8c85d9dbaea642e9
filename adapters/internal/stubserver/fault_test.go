package stubserver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/stubserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Faults are handed out once each, in order, per route; a fault with no
// status lets the route run.
func TestQueueAndApply(t *testing.T) {
	t.Parallel()
	var q stubserver.Queue
	q.Add("GET /a", stubserver.Fault{})
	q.Add("GET /a", stubserver.Fault{Status: http.StatusTeapot})
	q.Add("GET /a", stubserver.Fault{Status: http.StatusOK, Body: "x", DeclaredLength: 10})
	srv := stubserver.Server{
		DefaultBody: func(status int) string { return "default" },
		ContentType: func(string) string { return "text/plain" },
		ClientGone:  func() {},
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f, ok := q.Take("GET /a"); ok && f.Apply(srv, w, r) {
			return
		}
		_, _ = io.WriteString(w, "route")
	}))
	t.Cleanup(ts.Close)
	get := func() (int, string, error) {
		res, err := http.Get(ts.URL)
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, string(b), err
	}
	status, body, err := get()
	require.NoError(t, err)
	assert.Equal(t, "route", body, "a fault without a status lets the route answer")
	status, body, err = get()
	require.NoError(t, err)
	assert.Equal(t, http.StatusTeapot, status)
	assert.Equal(t, "default", body)
	_, _, err = get()
	require.Error(t, err, "a body shorter than declared is a truncated answer")
	_, body, err = get()
	require.NoError(t, err)
	assert.Equal(t, "route", body, "the queue is empty again")
}

func TestLog(t *testing.T) {
	t.Parallel()
	var l stubserver.Log
	r := httptest.NewRequest(http.MethodPost, "/a/b?x=1", nil)
	r.Header.Set("X-Key", "v")
	assert.Equal(t, 0, l.Record("POST /a/{b}", r, []byte("body")))
	assert.Equal(t, 1, l.Record("GET /c", httptest.NewRequest(http.MethodGet, "/c", nil), nil))
	l.Gone(1)
	all := l.All()
	require.Len(t, all, 2)
	assert.Equal(t, stubserver.Request{Route: "POST /a/{b}", Method: "POST", Path: "/a/b", RawPath: "/a/b", Query: "x=1", Body: "body", Header: r.Header}, all[0])
	assert.True(t, all[1].ClientGone)
	assert.Equal(t, 1, l.Count("GET /c"))
	assert.Zero(t, l.Count("GET /d"))
	r.Header.Set("X-Key", "changed")
	assert.Equal(t, "v", l.All()[0].Header.Get("X-Key"), "headers are copied")
}

func TestJSONOrText(t *testing.T) {
	t.Parallel()
	label := stubserver.JSONOrText("application/json")
	assert.Equal(t, "application/json", label(` {"a":1}`))
	assert.Equal(t, "application/json", label(`[1]`))
	assert.Equal(t, "text/plain; charset=utf-8", label("gone"))
}

// The log counts the most requests of a route answered at once.
func TestMostInFlight(t *testing.T) {
	t.Parallel()
	var l stubserver.Log
	a := l.Begin("POST /x")
	b := l.Begin("POST /x")
	other := l.Begin("GET /y")
	a()
	a() // ending twice counts once
	c := l.Begin("POST /x")
	b()
	c()
	other()
	assert.Equal(t, 2, l.MostInFlight("POST /x"))
	assert.Equal(t, 1, l.MostInFlight("GET /y"))
	assert.Zero(t, l.MostInFlight("DELETE /z"))
}
