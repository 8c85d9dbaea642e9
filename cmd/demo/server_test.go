package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/internal/syncbuf"
	"github.com/paddockhq/paddock/messages"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startConsole serves a console on a loopback port until the test ends.
func startConsole(t *testing.T, edit ...func(*console)) (*console, string) {
	t.Helper()
	metrics := prometheus.NewRegistry()
	rt, reg, stop, err := startRuntime(t.TempDir(), zerolog.Nop(), metrics)
	require.NoError(t, err)
	c := newConsole(rt, reg, zerolog.Nop())
	c.metrics = metrics
	for _, e := range edit {
		e(c)
	}
	return c, serveConsole(t, c, stop)
}

// localSandbox makes the local sandbox name in c's runtime, and answers a
// context that bounds the test's steps (a hang's bound, never a verdict).
func localSandbox(t *testing.T, c *console, name string, bound time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	t.Cleanup(cancel)
	_, err := c.rt.Adapter(paddock.ProviderLocal).Create(ctx, name, paddock.CreateOpts{})
	require.NoError(t, err)
	return ctx
}

// serveConsole serves c on a loopback port until the test ends, then
// calls stop; it answers the console's base URL.
func serveConsole(t *testing.T, c *console, stop func()) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-done
		stop()
	})
	return "http://" + ln.Addr().String()
}

func TestTheTokenIsRequired(t *testing.T) {
	t.Parallel()
	c, base := startConsole(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	status := func(method, path string, header http.Header) int {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(`{"Provider":"local","Name":"stolen"}`))
		require.NoError(t, err)
		for k, v := range header {
			req.Header[k] = v
		}
		res, err := client.Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		return res.StatusCode
	}
	// The page holds no secret; everything else wants the token.
	for _, path := range []string{"/", "/app.js"} {
		assert.Equal(t, http.StatusOK, status(http.MethodGet, path, nil), "%s is the page", path)
	}
	for _, path := range []string{"/api/providers", "/api/stats", "/metrics", "/ws", "/api/providers?token=" + c.token} {
		assert.Equal(t, http.StatusUnauthorized, status(http.MethodGet, path, nil), "%s without the token", path)
	}
	assert.Equal(t, http.StatusUnauthorized, status(http.MethodGet, "/api/providers", http.Header{"Authorization": {"Bearer wrong"}}), "a wrong token")

	// The printed URL carries the token in its fragment, which no client
	// sends, and the console sets no cookie.
	printed, err := url.Parse(c.url(strings.TrimPrefix(base, "http://")))
	require.NoError(t, err)
	assert.Equal(t, "token="+c.token, printed.Fragment)
	assert.Empty(t, printed.RawQuery)
	res, err := client.Get(printed.String())
	require.NoError(t, err)
	_ = res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Empty(t, res.Cookies(), "the console sets no cookie: a browser would send it to every port of 127.0.0.1")

	// The token in a cookie, as another server on this host would receive
	// one, is no credential, replayed without any browser header.
	cookie := http.Header{"Cookie": {"paddock_token=" + c.token}}
	assert.Equal(t, http.StatusUnauthorized, status(http.MethodGet, "/api/providers", cookie))
	assert.Equal(t, http.StatusUnauthorized, status(http.MethodPost, "/api/sandboxes", cookie))
	names, err := c.rt.Adapter(paddock.ProviderLocal).ListAllNames(context.Background())
	require.NoError(t, err)
	assert.NotContains(t, names, "stolen")

	// A Bearer header works for API clients, the scheme in any case.
	for _, scheme := range []string{"Bearer", "bearer", "BEARER"} {
		assert.Equal(t, http.StatusOK, status(http.MethodGet, "/api/providers", http.Header{"Authorization": {scheme + " " + c.token}}), scheme)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/api/providers", nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	var providers []struct{ Name string }
	require.NoError(t, json.NewDecoder(res.Body).Decode(&providers))
	res.Body.Close()
	names = []string{}
	for _, p := range providers {
		names = append(names, p.Name)
	}
	want := []string{}
	for _, p := range c.providers {
		want = append(want, string(p))
	}
	assert.Subset(t, want, []string{"fake", "local"}, "local and the fake always (docker too when an engine answers)")
	assert.ElementsMatch(t, want, names, "the page lists every provider of the runtime")

	// The socket: a browser offers the token as a subprotocol.
	wsURL := strings.Replace(base, "http", "ws", 1) + "/ws"
	for name, protocols := range map[string][]string{"none": nil, "a wrong token": {pageProtocol, tokenProtocol + "wrong"}} {
		_, resp, err := (&websocket.Dialer{Subprotocols: protocols}).Dial(wsURL, http.Header{"Origin": {base}})
		require.Error(t, err, name)
		require.NotNil(t, resp, name)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, name)
	}
	conn, resp, err := (&websocket.Dialer{Subprotocols: []string{pageProtocol, tokenProtocol + c.token}}).Dial(wsURL, http.Header{"Origin": {base}})
	require.NoError(t, err)
	assert.Equal(t, pageProtocol, resp.Header.Get("Sec-WebSocket-Protocol"), "the server answers with the page's protocol, never the token")
	_ = conn.Close()

	req, _ = http.NewRequest(http.MethodGet, base+"/api/providers", nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Host = "evil.example:80"
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusForbidden, res.StatusCode, "a foreign Host is refused (DNS rebinding)")
}

// caller makes the console's API calls of a test, with the token: the
// status and the body of each.
func caller(t *testing.T, c *console, base string) func(method, path string, body io.Reader) (int, string) {
	return func(method, path string, body io.Reader) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, body)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+c.token)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
}

// The serve command tells a newcomer where to click and where the demo
// sandbox's files are, then serves until it is stopped.
func TestServeSaysWhereTheDemoSandboxLives(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errs syncbuf.Buffer
	done := make(chan int, 1)
	go func() { done <- serveCommand(ctx, []string{"-addr", "127.0.0.1:0", "-root", root}, &out, &errs) }()
	files := regexp.MustCompile(`keeps its files in (\S+)\)`)
	require.Eventually(t, func() bool { return files.MatchString(out.String()) }, 30*time.Second, 10*time.Millisecond,
		"stdout %q, stderr %q", out.String(), errs.String())
	assert.Contains(t, out.String(), "Paddock console: open http://127.0.0.1:")
	dir := files.FindStringSubmatch(out.String())[1]
	assert.True(t, strings.HasPrefix(dir, root), "%s is under the local root %s", dir, root)
	info, err := os.Stat(dir)
	require.NoError(t, err)
	assert.True(t, info.IsDir())
	cancel()
	assert.Equal(t, 0, <-done)
}

// The file routes answer the taxonomy as statuses: a climbing path is 400,
// an absent file 404, a provider without files 501; the routes need the
// token like every other.
func TestFileRoutes(t *testing.T) {
	t.Parallel()
	c, base := startConsole(t)
	do := caller(t, c, base)
	status, _ := do(http.MethodPost, "/api/sandboxes", strings.NewReader(`{"provider":"local","name":"demo"}`))
	require.Equal(t, http.StatusOK, status)
	status, _ = do(http.MethodPut, "/api/file?provider=local&name=demo&path=/notes/a.txt", strings.NewReader("hello"))
	require.Equal(t, http.StatusOK, status)
	status, body := do(http.MethodGet, "/api/files?provider=local&name=demo&path=/notes", nil)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `"name":"a.txt"`)
	status, body = do(http.MethodGet, "/api/file?provider=local&name=demo&path=/notes/a.txt", nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "hello", body)
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/api/files?provider=local&name=demo&path=/notes/../..", http.StatusBadRequest},
		{http.MethodGet, "/api/file?provider=local&name=demo&path=/notes/absent", http.StatusNotFound},
		{http.MethodDelete, "/api/file?provider=local&name=demo&path=/notes", http.StatusBadRequest}, // not empty, not recursive
		{http.MethodPut, "/api/file?provider=local&name=demo&path=/x&mode=999", http.StatusBadRequest},
		{http.MethodGet, "/api/files?provider=nope&name=demo", http.StatusBadRequest},
	} {
		status, body := do(c.method, c.path, strings.NewReader("x"))
		assert.Equal(t, c.status, status, "%s %s: %s", c.method, c.path, body)
	}
	status, _ = do(http.MethodDelete, "/api/file?provider=local&name=demo&path=/notes&recursive=true", nil)
	require.Equal(t, http.StatusOK, status)
	status, _ = do(http.MethodGet, "/api/files?provider=local&name=demo&path=/notes", nil)
	require.Equal(t, http.StatusNotFound, status)
	res, err := http.Get(base + "/api/files?provider=local&name=demo")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
}

// /metrics serves the runtime's metrics behind the token, and /api/stats
// sums them for the live panel: after a command, its bytes are counted.
func TestMetricsAndStats(t *testing.T) {
	t.Parallel()
	c, base := startConsole(t)
	ctx := localSandbox(t, c, "demo", time.Minute)
	v, err := runView(ctx, c, base, []string{"sh", "-c", "printf hello; printf oops >&2"})
	require.NoError(t, err)
	require.Equal(t, "exit", v.terminal.Type)

	res, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "the metrics are behind the token")
	call := caller(t, c, base)
	get := func(path string) (int, string) { return call(http.MethodGet, path, nil) }
	code, body := get("/metrics")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `paddock_stream_bytes_total{provider="local",stream="stdout"} 5`)
	assert.Contains(t, body, `paddock_stream_bytes_total{provider="local",stream="stderr"} 4`)
	assert.Contains(t, body, `paddock_sandboxes_live{provider="local"} 1`)
	assert.Contains(t, body, "paddock_journal_bytes")
	require.Eventually(t, func() bool {
		code, body := get("/api/stats")
		var s stats
		return code == http.StatusOK && json.Unmarshal([]byte(body), &s) == nil &&
			s.Bytes == 9 && s.Sandboxes == 1 && s.Commands == 0 && s.Journal > 0 && s.Errors == 0
	}, time.Minute, 10*time.Millisecond, "the live panel's numbers")

	// Every failure the page sees counts once: a name refused before the
	// runtime saw it, an unknown provider, a stream that could not start.
	status, _ := call(http.MethodPost, "/api/sandboxes", strings.NewReader(`{"provider":"local","name":"bad/name"}`))
	require.Equal(t, http.StatusBadRequest, status)
	status, _ = call(http.MethodGet, "/api/sandboxes?provider=nope", nil)
	require.Equal(t, http.StatusBadRequest, status)
	_, err = runView(ctx, c, base, nil) // an empty command: the stream cannot start
	require.NoError(t, err)
	code, body = get("/api/stats")
	require.Equal(t, http.StatusOK, code)
	var s stats
	require.NoError(t, json.Unmarshal([]byte(body), &s))
	assert.EqualValues(t, 3, s.Errors, "the live panel counts each failure")
}

// view is what one console view received over its socket.
type view struct {
	stdout   bytes.Buffer
	terminal serverMessage
	closed   error // how the socket ended after the terminal message
}

// runView opens a view of argv in the local demo sandbox and reads its
// socket to the end.
func runView(ctx context.Context, c *console, base string, argv []string) (view, error) {
	var v view
	header := http.Header{"Authorization": {"Bearer " + c.token}, "Origin": {base}}
	d := websocket.Dialer{}
	conn, _, err := d.DialContext(ctx, strings.Replace(base, "http", "ws", 1)+"/ws", header)
	if err != nil {
		return v, err
	}
	defer conn.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetReadDeadline(d)
	}
	if err := conn.WriteJSON(clientMessage{Op: "run", Provider: "local", Sandbox: "demo", Argv: argv}); err != nil {
		return v, err
	}
	for {
		var m serverMessage
		if err := conn.ReadJSON(&m); err != nil {
			return v, fmt.Errorf("after %d bytes, no terminal message: %w", v.stdout.Len(), err)
		}
		switch m.Type {
		case "stdout":
			v.stdout.WriteString(m.Data)
		case "exit", "error", "failed":
			v.terminal = m
			_, _, v.closed = conn.ReadMessage()
			return v, nil
		}
	}
}

// Every view gets all of its command's output, its exit, and then a normal
// close of the socket (never a dropped connection the page would read as
// trouble), with a hundred views running at once.
func TestSocketsDeliverEverythingThenCloseNormally(t *testing.T) {
	t.Parallel()
	c, base := startConsole(t, func(c *console) { c.limits.perClient = 1000 }) // 100 views from one client
	ctx := localSandbox(t, c, "demo", 2*time.Minute)
	var want bytes.Buffer
	for n := 1; n <= 20000; n++ {
		fmt.Fprintln(&want, n)
	}
	const views = 100
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures []string
	)
	for i := range views {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := runView(ctx, c, base, []string{"sh", "-c", "seq 1 20000; exit 3"})
			problem := ""
			var ce *websocket.CloseError
			switch {
			case err != nil:
				problem = err.Error()
			case v.terminal.Type != "exit" || v.terminal.Code != 3:
				problem = fmt.Sprintf("terminal %+v", v.terminal)
			case !bytes.Equal(v.stdout.Bytes(), want.Bytes()):
				problem = fmt.Sprintf("%d of %d bytes", v.stdout.Len(), want.Len())
			case !errors.As(v.closed, &ce) || ce.Code != websocket.CloseNormalClosure:
				problem = fmt.Sprintf("the socket ended with %v, not a normal close", v.closed)
			}
			if problem != "" {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("view %d: %s", i, problem))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	assert.Empty(t, failures, "%d of %d views went wrong; the first: %v", len(failures), views, failures[:min(len(failures), 5)])
}

// A view that detaches gets a normal close too, and its session runs on.
func TestADetachedSocketClosesNormally(t *testing.T) {
	t.Parallel()
	c, base := startConsole(t)
	ctx := localSandbox(t, c, "demo", time.Minute)
	header := http.Header{"Authorization": {"Bearer " + c.token}, "Origin": {base}}
	conn, _, err := websocket.DefaultDialer.DialContext(ctx, strings.Replace(base, "http", "ws", 1)+"/ws", header)
	require.NoError(t, err)
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	require.NoError(t, conn.WriteJSON(clientMessage{Op: "run", Provider: "local", Sandbox: "demo",
		Argv: []string{"sh", "-c", "echo ready; exec cat"}, Stdin: true}))
	var started, out serverMessage
	require.NoError(t, conn.ReadJSON(&started))
	require.Equal(t, "started", started.Type)
	require.NoError(t, conn.ReadJSON(&out))
	require.Equal(t, serverMessage{Type: "stdout", Seq: 1, Data: "ready\n"}, out)

	require.NoError(t, conn.WriteJSON(clientMessage{Op: "detach"}))
	_, _, err = conn.ReadMessage()
	var ce *websocket.CloseError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, websocket.CloseNormalClosure, ce.Code)

	// The session still runs: an attacher's stdin is echoed.
	st, err := c.rt.Adapter(paddock.ProviderLocal).Attach(ctx, paddock.Handle{Provider: paddock.ProviderLocal, Name: "demo"}, started.Session, paddock.AttachOpts{Stdin: true})
	require.NoError(t, err)
	again := st.(*actors.FrameStream)
	defer again.Close()
	require.NoError(t, again.WriteStdin(ctx, []byte("ping\n")))
	var seen string
	for !strings.Contains(seen, "ping") {
		select {
		case f, ok := <-again.C():
			require.True(t, ok, "the session ended; seen %q", seen)
			if o, isOut := f.(*messages.Stdout); isOut {
				seen += string(o.GetData())
			}
		case <-ctx.Done():
			require.Fail(t, "no echo", "seen %q", seen)
		}
	}
}

// dialView opens a console socket with the page's credentials and origin.
func dialView(ctx context.Context, c *console, base string) (*websocket.Conn, *http.Response, error) {
	header := http.Header{"Authorization": {"Bearer " + c.token}, "Origin": {base}}
	return (&websocket.Dialer{}).DialContext(ctx, strings.Replace(base, "http", "ws", 1)+"/ws", header)
}

// A socket that never sends its first message is closed by the console
// once the first-message wait is over, not held for ever.
func TestAnIdleSocketIsClosed(t *testing.T) {
	t.Parallel()
	c, base := startConsole(t, func(c *console) { c.limits.firstMessage = 200 * time.Millisecond })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, _, err := dialView(ctx, c, base)
	require.NoError(t, err)
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(50 * time.Second))
	_, _, err = conn.ReadMessage()
	require.Error(t, err)
	var timeout interface{ Timeout() bool }
	require.False(t, errors.As(err, &timeout) && timeout.Timeout(), "the console closed it, long before our own deadline: %v", err)
	var closed *websocket.CloseError
	require.ErrorAs(t, err, &closed, "with a close frame, not a dropped connection")
	assert.Equal(t, websocket.ClosePolicyViolation, closed.Code)
	assert.Contains(t, closed.Text, "no first message")

	// A first message that is not JSON, and one that starts nothing, end
	// with a close frame that says why too.
	for _, tc := range []struct {
		first string
		code  int
	}{{"not json", websocket.CloseUnsupportedData}, {`{"op":"sing"}`, websocket.ClosePolicyViolation}} {
		conn, _, err := dialView(ctx, c, base)
		require.NoError(t, err)
		require.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte(tc.first)))
		_ = conn.SetReadDeadline(time.Now().Add(50 * time.Second))
		for err == nil {
			_, _, err = conn.ReadMessage() // a "failed" message may come first
		}
		require.ErrorAs(t, err, &closed, tc.first)
		assert.Equal(t, tc.code, closed.Code, tc.first)
		assert.NotEmpty(t, closed.Text, tc.first)
		_ = conn.Close()
	}
}

// One client holds at most perClient sockets; the next is refused with
// 429 before the upgrade, and a socket that ends frees its place.
func TestSocketsPerClientAreCapped(t *testing.T) {
	t.Parallel()
	c, base := startConsole(t, func(c *console) { c.limits.perClient = 2 })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first, _, err := dialView(ctx, c, base)
	require.NoError(t, err)
	second, _, err := dialView(ctx, c, base)
	require.NoError(t, err)
	defer second.Close()
	_, res, err := dialView(ctx, c, base)
	require.Error(t, err)
	require.NotNil(t, res)
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	require.NoError(t, first.Close())
	require.Eventually(t, func() bool {
		conn, _, err := dialView(ctx, c, base)
		if err == nil {
			_ = conn.Close()
		}
		return err == nil
	}, 30*time.Second, 20*time.Millisecond, "a closed socket frees its place")
}

// The policy routes apply a sandbox's allow list through the runtime and
// show what this console applied: nothing at first, the list after a
// PUT, an empty list as all denied; a bad rule is 400 and changes
// nothing; an absent sandbox is 404; a destroyed sandbox's list is
// forgotten.
func TestPolicyRoutes(t *testing.T) {
	t.Parallel()
	c, base := startConsole(t)
	do := caller(t, c, base)
	status, _ := do(http.MethodPost, "/api/sandboxes", strings.NewReader(`{"provider":"fake","name":"net"}`))
	require.Equal(t, http.StatusOK, status)
	for _, step := range []struct {
		method, body string
		status       int
		shown        string
	}{
		{http.MethodGet, "", http.StatusOK, `{"applied":false,"allow":[]}`},
		{http.MethodPut, `{"provider":"fake","name":"net","allow":["pypi.org","*.pythonhosted.org"]}`, http.StatusOK, `{"applied":true,"allow":["pypi.org","*.pythonhosted.org"]}`},
		{http.MethodPut, `{"provider":"fake","name":"net","allow":["https://pypi.org"]}`, http.StatusBadRequest, ""},
		{http.MethodGet, "", http.StatusOK, `{"applied":true,"allow":["pypi.org","*.pythonhosted.org"]}`},
		{http.MethodPut, `{"provider":"fake","name":"net","allow":[]}`, http.StatusOK, `{"applied":true,"allow":[]}`},
		{http.MethodPut, `{"provider":"fake","name":"absent","allow":[]}`, http.StatusNotFound, ""},
	} {
		status, body := do(step.method, "/api/policy?provider=fake&name=net", strings.NewReader(step.body))
		assert.Equal(t, step.status, status, "%s %s: %s", step.method, step.body, body)
		if step.shown != "" {
			assert.JSONEq(t, step.shown, body, "%s %s", step.method, step.body)
		} else {
			assert.Contains(t, body, `"error"`, "%s %s", step.method, step.body)
		}
	}
	status, _ = do(http.MethodDelete, "/api/sandboxes?provider=fake&name=net", nil)
	require.Equal(t, http.StatusOK, status)
	status, body := do(http.MethodGet, "/api/policy?provider=fake&name=net", nil)
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"applied":false,"allow":[]}`, body, "forgotten with the sandbox")
}

// An upload over the console's cap answers 413 invalid(file_too_large),
// whether its length is declared or found out midway, and leaves the file
// as it was (or absent) on every provider the console offers; exactly the
// cap is written.
func TestUploadOverTheCapChangesNothing(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	c, base := startConsole(t, func(c *console) { c.limits.maxUpload = limit })
	do := caller(t, c, base)
	for _, provider := range []string{"local", "fake"} {
		status, body := do(http.MethodPost, "/api/sandboxes", strings.NewReader(`{"provider":"`+provider+`","name":"caps"}`))
		require.Equal(t, http.StatusOK, status, body)
		file := "/api/file?provider=" + provider + "&name=caps&path=/up/"
		status, body = do(http.MethodPut, file+"kept.bin", strings.NewReader("old"))
		require.Equal(t, http.StatusOK, status, body)
		for name, over := range map[string]io.Reader{
			"declared": bytes.NewReader(make([]byte, limit+1)),
			"chunked":  io.MultiReader(bytes.NewReader(make([]byte, limit)), strings.NewReader("x")),
		} {
			for _, target := range []string{"kept.bin", "new.bin"} {
				if r, ok := over.(*bytes.Reader); ok {
					_, _ = r.Seek(0, io.SeekStart)
				}
				status, body := do(http.MethodPut, file+target, over)
				assert.Equal(t, http.StatusRequestEntityTooLarge, status, "%s %s %s: %s", provider, name, target, body)
				assert.Contains(t, body, `"kind":"invalid"`)
				assert.Contains(t, body, paddock.DetailFileTooLarge)
				over = io.MultiReader(bytes.NewReader(make([]byte, limit)), strings.NewReader("x"))
			}
		}
		status, body = do(http.MethodGet, file+"kept.bin", nil)
		require.Equal(t, http.StatusOK, status)
		assert.Equal(t, "old", body, "%s: the file over the cap left the old content", provider)
		status, _ = do(http.MethodGet, file+"new.bin", nil)
		assert.Equal(t, http.StatusNotFound, status, "%s: no file is left by a refused upload", provider)
		status, body = do(http.MethodGet, "/api/files?provider="+provider+"&name=caps&path=/up", nil)
		require.Equal(t, http.StatusOK, status)
		assert.NotContains(t, body, ".paddock-", "%s: no staging file is left", provider)

		status, body = do(http.MethodPut, file+"kept.bin", bytes.NewReader(make([]byte, limit)))
		require.Equal(t, http.StatusOK, status, body)
		status, body = do(http.MethodGet, file+"kept.bin", nil)
		require.Equal(t, http.StatusOK, status)
		assert.Len(t, body, limit, "%s: exactly the cap is written", provider)
	}
}

// The API's answers name the fault and its kind: a body too large is 413,
// trailing bytes after the JSON value are refused, an unknown provider is
// invalid, a path's fault is said as it is, a name too long is invalid,
// never a transient 502.
func TestAnswersNameTheFault(t *testing.T) {
	t.Parallel()
	c, base := startConsole(t)
	call := caller(t, c, base)
	do := func(method, path, body string) (int, map[string]string) {
		status, text := call(method, path, strings.NewReader(body))
		var out map[string]string
		_ = json.Unmarshal([]byte(text), &out)
		return status, out
	}
	status, _ := do(http.MethodPost, "/api/sandboxes", `{"provider":"local","name":"faults"}`)
	require.Equal(t, http.StatusOK, status)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		says                     string
	}{
		{"a body over 64 KiB", http.MethodPost, "/api/sandboxes", `{"provider":"local","name":"` + strings.Repeat("x", 70<<10) + `"}`, http.StatusRequestEntityTooLarge, "larger than"},
		{"bytes after the JSON", http.MethodPost, "/api/sandboxes", `{"provider":"local","name":"two"} {"x":1}`, http.StatusBadRequest, "more than one JSON value"},
		{"an unknown provider", http.MethodPost, "/api/sandboxes", `{"provider":"nope","name":"x"}`, http.StatusBadRequest, "nope"},
		{"a NUL byte in a path", http.MethodGet, "/api/file?provider=local&name=faults&path=/a%00b", "", http.StatusBadRequest, "NUL"},
		{"a name too long", http.MethodPut, "/api/file?provider=local&name=faults&path=/" + strings.Repeat("n", 300), "x", http.StatusBadRequest, "longer than 255"},
		{"a climbing path", http.MethodGet, "/api/file?provider=local&name=faults&path=/workspace/../../etc/passwd", "", http.StatusBadRequest, ".."},
	} {
		status, out := do(tc.method, tc.path, tc.body)
		assert.Equal(t, tc.status, status, tc.name)
		assert.Equal(t, "invalid", out["kind"], tc.name)
		assert.Contains(t, out["error"], tc.says, tc.name)
	}
	names, err := c.rt.Adapter(paddock.ProviderLocal).ListAllNames(context.Background())
	require.NoError(t, err)
	assert.NotContains(t, names, "two", "a body with trailing bytes changes nothing")
}
