package stubserver_test

import (
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/stubserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A route records its request, refuses through its guard, answers a
// queued fault in the server's style once, then behaves; Close stops the
// server, its work and its directory, once.
func TestBase(t *testing.T) {
	t.Parallel()
	var b stubserver.Base
	stopped, stoppedLate := 0, false
	var startedLate atomic.Bool
	style := stubserver.Style{DefaultBody: func(_ *http.Request, status int) string { return `{"fault":` + http.StatusText(status) + `}` },
		ContentType: stubserver.JSONOrText("application/json")}
	b.Start(t, "stubtest", style, func() http.Handler {
		mux := http.NewServeMux()
		guard := func(w http.ResponseWriter, r *http.Request) bool {
			if r.Header.Get("Key") != "k" {
				w.WriteHeader(http.StatusUnauthorized)
				return false
			}
			return true
		}
		mux.HandleFunc("POST /x", b.Route("POST /x", true, guard, func(w http.ResponseWriter, _ *http.Request, body []byte) {
			_, _ = w.Write(append([]byte("got "), body...))
		}))
		return mux
	}, func() {
		stopped++
		stoppedLate = startedLate.Load()
	})
	_, err := os.Stat(b.Root())
	require.NoError(t, err, "the sandboxes' directory exists")

	post := func(key string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, b.URL()+"/x", strings.NewReader("hi"))
		require.NoError(t, err)
		req.Header.Set("Key", key)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	status, _ := post("wrong")
	assert.Equal(t, http.StatusUnauthorized, status, "the guard refuses")
	b.Fail("POST /x", stubserver.Fault{Status: http.StatusServiceUnavailable})
	status, body := post("k")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, `{"fault":Service Unavailable}`, body, "the fault answers in the server's style")
	status, body = post("k")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "got hi", body, "then the route behaves")
	assert.Equal(t, 3, b.Count("POST /x"))
	assert.Equal(t, "hi", b.Requests()[0].Body)
	assert.Equal(t, 1, b.MostInFlight("POST /x"))
	assert.Zero(t, b.InFlight("POST /x"))

	ran := make(chan struct{})
	b.Go(func() {
		<-b.Closing()
		startedLate.Store(true) // work the last request starts as the server closes
		close(ran)
	})
	b.Close()
	b.Close()
	<-ran
	assert.Equal(t, 2, stopped, "the shutdown runs before and after the server's work, once per Close")
	assert.True(t, stoppedLate, "what the work started as the server closed is stopped too")
	_, ok := b.Track()
	assert.False(t, ok, "a closed server takes no more work")
	_, err = os.Stat(b.Root())
	assert.True(t, os.IsNotExist(err), "the directory is gone")
}

// Mux serves every route of its table through Route: a streamed route
// gets its body unread, the others the body read for them.
func TestMuxReadsTheBodyUnlessStreamed(t *testing.T) {
	t.Parallel()
	var b stubserver.Base
	echo := func(w http.ResponseWriter, r *http.Request, body []byte) {
		rest, _ := io.ReadAll(r.Body)
		_, _ = w.Write([]byte("read " + string(body) + "; left " + string(rest)))
	}
	b.Start(t, "stubmux", stubserver.Style{}, func() http.Handler {
		return b.Mux(nil, stubserver.Routes{"PUT /read": echo, "PUT /stream": echo}, "PUT /stream")
	}, nil)
	for route, want := range map[string]string{"/read": "read hi; left ", "/stream": "read ; left hi"} {
		req, err := http.NewRequest(http.MethodPut, b.URL()+route, strings.NewReader("hi"))
		require.NoError(t, err)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		got, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		assert.Equal(t, want, string(got), route)
		assert.Equal(t, 1, b.Count("PUT "+route), "recorded under its pattern")
	}
}

func TestEachRunsUnlocked(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	m := map[string]int{"a": 1, "b": 2}
	sum := 0
	stubserver.Each(&mu, m, func(v int) {
		require.True(t, mu.TryLock(), "f runs with the lock free")
		mu.Unlock()
		sum += v
	})
	assert.Equal(t, 3, sum)
}
