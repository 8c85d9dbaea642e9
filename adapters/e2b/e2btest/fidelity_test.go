package e2btest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests in this file prove e2btest answers as envd and E2B's proxy do,
// row by row of adapters/e2b/FIDELITY.md, with raw HTTP (no adapter).

// envd sends one raw envd request to sandbox id, routed by header.
func envd(t *testing.T, srv *e2btest.Server, id, method, path, contentType string, body []byte, header http.Header) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL()+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("E2b-Sandbox-Id", id)
	req.Header.Set("E2b-Sandbox-Port", "49983")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header, data
}

// envelope frames one message for a Connect stream.
func envelope(msg string) []byte {
	head := make([]byte, 5)
	binary.BigEndian.PutUint32(head[1:], uint32(len(msg)))
	return append(head, msg...)
}

// frame is one envelope of a stream answer.
type frame struct {
	end  bool
	json string
}

// frames splits a stream answer into its envelopes; every one is whole.
func frames(t *testing.T, body []byte) []frame {
	t.Helper()
	var out []frame
	for len(body) > 0 {
		require.GreaterOrEqual(t, len(body), 5, "a whole envelope head")
		n := int(binary.BigEndian.Uint32(body[1:5]))
		require.GreaterOrEqual(t, len(body)-5, n, "a whole envelope")
		out = append(out, frame{end: body[0]&2 != 0, json: compact(body[5 : 5+n])})
		body = body[5+n:]
	}
	return out
}

// start runs a process through a raw Start and answers its frames.
func start(t *testing.T, srv *e2btest.Server, id, request string, header http.Header) (int, []frame) {
	t.Helper()
	status, h, body := envd(t, srv, id, http.MethodPost, "/process.Process/Start", "application/connect+json", envelope(request), header)
	if status != http.StatusOK {
		return status, nil
	}
	assert.Equal(t, "application/connect+json", h.Get("Content-Type"))
	return status, frames(t, body)
}

// unary calls a unary Process method with JSON.
func unary(t *testing.T, srv *e2btest.Server, id, method, request string) (int, string) {
	t.Helper()
	status, _, body := envd(t, srv, id, http.MethodPost, "/process.Process/"+method, "application/json", []byte(request), nil)
	return status, compact(body)
}

// compact drops the whitespace of a JSON text (protojson varies it on
// purpose), or returns a text that is not JSON as it is.
func compact(b []byte) string {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return string(b)
	}
	return out.String()
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// stdoutOf joins the stdout of a stream's data frames.
func stdoutOf(t *testing.T, fs []frame) string {
	var out strings.Builder
	for _, f := range fs {
		var ev struct {
			Event struct {
				Data struct {
					Stdout []byte `json:"stdout"`
					Pty    []byte `json:"pty"`
				} `json:"data"`
			} `json:"event"`
		}
		if !f.end {
			require.NoError(t, json.Unmarshal([]byte(f.json), &ev))
			out.Write(ev.Event.Data.Stdout)
			out.Write(ev.Event.Data.Pty)
		}
	}
	return out.String()
}

func TestRoutingByHeaderOrHost(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base"})
	status, _, _ := envd(t, srv, id, http.MethodGet, "/health", "", nil, nil)
	assert.Equal(t, http.StatusNoContent, status, "routed by the E2b-Sandbox-Id header")

	req, err := http.NewRequest(http.MethodGet, srv.URL()+"/health", nil)
	require.NoError(t, err)
	req.Host = "49983-" + id + ".e2b.app"
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusNoContent, res.StatusCode, "routed by a 49983-<id> host")

	status, _, body := envd(t, srv, "inope", http.MethodGet, "/health", "", nil, nil)
	assert.Equal(t, http.StatusBadGateway, status, "an unknown sandbox is the proxy's 502")
	assert.Contains(t, string(body), `"sandboxId":"inope"`)
	status, _, _ = call(t, srv, http.MethodGet, "/health", nil)
	assert.Equal(t, http.StatusNotFound, status, "without routing it is the control plane")
}

func TestTheControlPlaneNeedsTheKey(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	req, err := http.NewRequest(http.MethodGet, srv.URL()+"/v2/sandboxes", nil)
	require.NoError(t, err)
	req.Header.Set("X-API-Key", "e2b_wrong")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	assert.JSONEq(t, `{"code":401,"message":"Invalid API key, it must start with 'e2b_' prefix"}`, string(body))
	reqs := srv.Requests()
	assert.Equal(t, "e2b_wrong", reqs[len(reqs)-1].Header.Get("X-API-Key"), "the key sent is recorded")
}

func TestSecureSandboxesNeedTheAccessToken(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	status, _, data := call(t, srv, http.MethodPost, "/sandboxes", map[string]any{"templateID": "base", "secure": true})
	require.Equal(t, http.StatusCreated, status)
	var out struct {
		ID    string `json:"sandboxID"`
		Token string `json:"envdAccessToken"`
	}
	require.NoError(t, json.Unmarshal(data, &out))
	require.NotEmpty(t, out.Token)
	assert.Equal(t, out.Token, srv.AccessToken(out.ID))
	status, _, data = call(t, srv, http.MethodGet, "/sandboxes/"+out.ID, nil)
	require.Equal(t, http.StatusOK, status)
	var detail struct {
		Token string `json:"envdAccessToken"`
	}
	require.NoError(t, json.Unmarshal(data, &detail))
	assert.Equal(t, out.Token, detail.Token, "SandboxDetail carries the token too (getInfo, connect by id)")

	status, _, body := envd(t, srv, out.ID, http.MethodPost, "/process.Process/Start", "application/connect+json",
		envelope(`{"process":{"cmd":"true"}}`), nil)
	assert.Equal(t, http.StatusUnauthorized, status, "a stream without the token is HTTP 401, not an end-stream")
	assert.JSONEq(t, `{"code":401,"message":"unauthorized access, please provide a valid access token or method signing if supported"}`, string(body))
	status, fs := start(t, srv, out.ID, `{"process":{"cmd":"true"}}`, http.Header{"X-Access-Token": {out.Token}})
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, frame{end: true, json: "{}"}, fs[len(fs)-1])
}

func TestUsersOfProcessesAndFiles(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base"})
	ghost := http.Header{"Authorization": {"Basic " + b64("ghost:")}}
	status, fs := start(t, srv, id, `{"process":{"cmd":"true"}}`, ghost)
	require.Equal(t, http.StatusOK, status, "a bad Basic-auth user on a stream is HTTP 200 ...")
	require.Len(t, fs, 1)
	assert.True(t, fs[0].end)
	assert.JSONEq(t, `{"error":{"code":"unauthenticated","message":"invalid username: 'ghost'"}}`, fs[0].json, "... and an end-stream error")

	upload := func(user string) (int, []byte) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		part, err := mw.CreateFormFile("file", "f.txt")
		require.NoError(t, err)
		_, _ = part.Write([]byte("data"))
		require.NoError(t, mw.Close())
		status, _, body := envd(t, srv, id, http.MethodPost, "/files?path=/tmp/f.txt&username="+user, mw.FormDataContentType(), buf.Bytes(), ghost)
		return status, body
	}
	status, body := upload("root")
	require.Equal(t, http.StatusOK, status, "the username parameter counts on /files, not the Basic-auth user: %s", body)
	assert.Equal(t, "root", srv.Owner(id, "/tmp/f.txt"))
	status, body = upload("ghost")
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.JSONEq(t, `{"code":401,"message":"invalid username: 'ghost'"}`, string(body), "envd's own error shape on /files")
	status, _, _ = envd(t, srv, id, http.MethodGet, "/health", "", nil, ghost)
	assert.Equal(t, http.StatusUnauthorized, status, "/health refuses an unknown user too")
}

func TestEnvdContentTypes(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base"})
	for _, tc := range []struct {
		path, contentType string
		body              []byte
		status            int
	}{
		{"/process.Process/List", "application/json", []byte(`{}`), http.StatusOK},
		{"/process.Process/List", "application/json; charset=utf-8", []byte(`{}`), http.StatusOK},
		{"/process.Process/List", "text/plain", []byte(`{}`), http.StatusUnsupportedMediaType},
		{"/process.Process/Start", "application/connect+json", envelope(`{"process":{"cmd":"true"}}`), http.StatusOK},
		{"/process.Process/Start", "application/octet-stream", envelope(`{"process":{"cmd":"true"}}`), http.StatusUnsupportedMediaType},
	} {
		status, _, _ := envd(t, srv, id, http.MethodPost, tc.path, tc.contentType, tc.body, nil)
		assert.Equal(t, tc.status, status, "%s as %s", tc.path, tc.contentType)
	}
}

// A Start: the start event first, output in chunks of at most 32 KiB with
// stdout and stderr apart, the end with envd's strings, always an
// end-stream; exit 0 carries no exitCode key; an unknown command is a
// start and exit 127, a missing cwd a failure before the start.
func TestStartEventsAndCodec(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base"})

	_, fs := start(t, srv, id, `{"process":{"cmd":"/bin/sh","args":["-c","head -c 100000 /dev/zero; echo err >&2; exit 3"]}}`, nil)
	require.GreaterOrEqual(t, len(fs), 4)
	assert.Regexp(t, `^\{"event":\{"start":\{"pid":\d+\}\}\}$`, fs[0].json, "the start event first")
	total := 0
	for _, f := range fs[1 : len(fs)-2] {
		var ev struct {
			Event struct {
				Data map[string][]byte `json:"data"`
			} `json:"event"`
		}
		require.NoError(t, json.Unmarshal([]byte(f.json), &ev))
		require.Len(t, ev.Event.Data, 1, "one of stdout or stderr per data event")
		for _, b := range ev.Event.Data {
			assert.LessOrEqual(t, len(b), 32<<10)
		}
		total += len(ev.Event.Data["stdout"])
	}
	assert.Equal(t, 100000, total)
	assert.JSONEq(t, `{"event":{"end":{"exitCode":3,"exited":true,"status":"exit status 3","error":"exit status 3"}}}`, fs[len(fs)-2].json)
	assert.Equal(t, frame{end: true, json: "{}"}, fs[len(fs)-1])

	_, fs = start(t, srv, id, `{"process":{"cmd":"true"}}`, nil)
	assert.JSONEq(t, `{"event":{"end":{"exited":true,"status":"exit status 0"}}}`, fs[len(fs)-2].json, "exit 0 has no exitCode key")

	_, fs = start(t, srv, id, `{"process":{"cmd":"no-such-command"}}`, nil)
	assert.Contains(t, fs[0].json, `"start"`, "an unknown command still starts")
	assert.Contains(t, fs[len(fs)-2].json, `"exitCode":127`)

	_, fs = start(t, srv, id, `{"process":{"cmd":"true","cwd":"/nope"}}`, nil)
	require.Len(t, fs, 1, "a missing cwd fails before the start")
	assert.Contains(t, fs[0].json, `"invalid_argument"`)

	// The codec takes snake_case, numbers as strings, enum numbers, and
	// unknown fields.
	status, _, _ := envd(t, srv, id, http.MethodPost, "/files?path=/tmp/marker", "application/octet-stream", []byte("in tmp"), nil)
	require.Equal(t, http.StatusOK, status)
	_, fs = start(t, srv, id, `{"process":{"cmd":"/bin/sh","args":["-c","echo $X; cat marker"],"envs":{"X":"y"},"cwd":"/tmp"},"stdin":false,"mystery":1}`, nil)
	assert.Equal(t, "y\nin tmp", stdoutOf(t, fs), "envs and cwd honoured")
	status, _ = unary(t, srv, id, "SendSignal", `{"process":{"pid":"1"},"signal":9}`)
	assert.Equal(t, http.StatusNotFound, status, "a pid as a string and a numeric enum decode")
	status, body := unary(t, srv, id, "List", `{"unknown_field":true}`)
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{}`, body, "an empty list is {}")
}

// Connect-Timeout-Ms is the process's lifetime on envd: at the deadline the
// process dies and the stream ends deadline_exceeded with no end event; 0
// ends the stream before the start while the process runs on.
func TestConnectTimeoutKillsTheProcess(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base"})
	_, fs := start(t, srv, id, `{"process":{"cmd":"sleep","args":["30"]}}`, http.Header{"Connect-Timeout-Ms": {"300"}})
	require.Len(t, fs, 2)
	assert.Contains(t, fs[0].json, `"start"`)
	assert.True(t, fs[1].end)
	assert.Contains(t, fs[1].json, `"deadline_exceeded"`, "no end event")
	require.Eventually(t, func() bool { _, body := unary(t, srv, id, "List", `{}`); return body == "{}\n" || body == "{}" }, time.Minute, 10*time.Millisecond, "the process was killed")

	// The deadline kills the process whether or not its client stays: here
	// the client leaves at the start event.
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/process.Process/Start",
		bytes.NewReader(envelope(`{"process":{"cmd":"sleep","args":["3600"]},"tag":"left"}`)))
	require.NoError(t, err)
	req.Header.Set("E2b-Sandbox-Id", id)
	req.Header.Set("Content-Type", "application/connect+json")
	req.Header.Set("Connect-Timeout-Ms", "500")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, err = io.ReadFull(res.Body, make([]byte, 5)) // the start event's envelope
	require.NoError(t, err)
	cancel()
	_ = res.Body.Close()
	_, body := unary(t, srv, id, "List", `{}`)
	require.Contains(t, body, `"tag":"left"`, "the process runs past its client")
	require.Eventually(t, func() bool {
		_, body := unary(t, srv, id, "List", `{}`)
		return !strings.Contains(body, `"tag":"left"`)
	},
		time.Minute, 10*time.Millisecond, "and is killed at its deadline")

	_, fs = start(t, srv, id, `{"process":{"cmd":"sleep","args":["30"]},"tag":"zero"}`, http.Header{"Connect-Timeout-Ms": {"0"}})
	require.Len(t, fs, 1, "no start event")
	assert.Contains(t, fs[0].json, `"deadline_exceeded"`)
	_, body = unary(t, srv, id, "List", `{}`)
	assert.Contains(t, body, `"tag":"zero"`, "the process runs on")
}

// Output nobody follows is lost; Connect follows live output only; a
// process outlives its client; an ended process answers Connect with start
// and end during its retention.
func TestProcessesOutliveTheirStreams(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base"})
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/process.Process/Start",
		bytes.NewReader(envelope(`{"process":{"cmd":"/bin/sh","args":["-c","echo early; read x; echo late:$x"]},"tag":"t1"}`)))
	require.NoError(t, err)
	req.Header.Set("E2b-Sandbox-Id", id)
	req.Header.Set("Content-Type", "application/connect+json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	next := func() []byte {
		head := make([]byte, 5)
		_, err := io.ReadFull(res.Body, head)
		require.NoError(t, err)
		msg := make([]byte, binary.BigEndian.Uint32(head[1:]))
		_, err = io.ReadFull(res.Body, msg)
		require.NoError(t, err)
		return msg
	}
	var started struct {
		Event struct {
			Start struct {
				Pid uint32 `json:"pid"`
			} `json:"start"`
		} `json:"event"`
	}
	require.NoError(t, json.Unmarshal(next(), &started))
	pid := started.Event.Start.Pid
	assert.Equal(t, `{"event":{"data":{"stdout":"`+b64("early\n")+`"}}}`, compact(next()), "the first line came to the Start stream")
	cancel()
	res.Body.Close()

	_, body := unary(t, srv, id, "List", `{}`)
	assert.Contains(t, body, `"tag":"t1"`, "the process outlives its client")
	assert.Contains(t, body, fmt.Sprintf(`"pid":%d`, pid))

	connected := make(chan []frame, 1)
	go func() {
		_, _, body := envd(t, srv, id, http.MethodPost, "/process.Process/Connect", "application/connect+json",
			envelope(fmt.Sprintf(`{"process":{"pid":%d}}`, pid)), nil)
		connected <- frames(t, body)
	}()
	require.Eventually(t, func() bool { return srv.Count("ENVD /process.Process/Connect") == 1 }, time.Minute, 5*time.Millisecond)
	// SendInput until the Connect stream is subscribed and sees the line.
	status, _ := unary(t, srv, id, "SendInput", fmt.Sprintf(`{"process":{"pid":%d},"input":{"stdin":"%s"}}`, pid, b64("x\n")))
	require.Equal(t, http.StatusOK, status)
	fs := <-connected
	out := stdoutOf(t, fs)
	assert.NotContains(t, out, "early", "output while nobody followed is lost")
	assert.Contains(t, fs[len(fs)-2].json, `"end"`)

	_, _, body2 := envd(t, srv, id, http.MethodPost, "/process.Process/Connect", "application/connect+json",
		envelope(fmt.Sprintf(`{"process":{"pid":%d}}`, pid)), nil)
	ended := frames(t, body2)
	require.Len(t, ended, 3, "an ended process answers start and end during its retention")
	assert.Contains(t, ended[0].json, `"start"`)
	assert.Contains(t, ended[1].json, `"end"`)
}

// SendInput, CloseStdin and SendSignal answer as envd does, on pipes and on
// a terminal.
func TestInputAndSignals(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base"})
	pidOf := func(tag string) string {
		t.Helper()
		var list struct {
			Processes []struct {
				Pid json.Number `json:"pid"`
				Tag string      `json:"tag"`
			} `json:"processes"`
		}
		var found string
		require.Eventually(t, func() bool {
			_, body := unary(t, srv, id, "List", `{}`)
			require.NoError(t, json.Unmarshal([]byte(body), &list))
			for _, p := range list.Processes {
				if p.Tag == tag {
					found = p.Pid.String()
				}
			}
			return found != ""
		}, time.Minute, 5*time.Millisecond)
		return found
	}
	background := func(request string) <-chan []frame {
		done := make(chan []frame, 1)
		go func() {
			_, _, body := envd(t, srv, id, http.MethodPost, "/process.Process/Start", "application/connect+json", envelope(request), nil)
			done <- frames(t, body)
		}()
		return done
	}

	catDone := background(`{"process":{"cmd":"cat"},"tag":"cat"}`)
	cat := pidOf("cat")
	sel := `{"pid":` + cat + `}`
	status, body := unary(t, srv, id, "SendInput", `{"process":`+sel+`,"input":{"stdin":"`+b64("hi")+`"}}`)
	assert.Equal(t, http.StatusOK, status, body)
	assert.JSONEq(t, `{}`, body)
	status, _ = unary(t, srv, id, "SendInput", `{"process":`+sel+`}`)
	assert.Equal(t, http.StatusNotImplemented, status, "no input branch")
	status, _ = unary(t, srv, id, "SendInput", `{"process":{},"input":{"stdin":"eA=="}}`)
	assert.Equal(t, http.StatusNotImplemented, status, "no selector")
	status, _ = unary(t, srv, id, "CloseStdin", `{"process":`+sel+`}`)
	assert.Equal(t, http.StatusOK, status)
	fs := <-catDone
	assert.Equal(t, "hi", stdoutOf(t, fs))
	status, body = unary(t, srv, id, "SendInput", `{"process":`+sel+`,"input":{"stdin":"eA=="}}`)
	assert.Equal(t, http.StatusNotFound, status, "after the exit")
	assert.Contains(t, body, `"not_found"`)

	sleepDone := background(`{"process":{"cmd":"sleep","args":["30"]},"tag":"sleep"}`)
	sel = `{"tag":"sleep"}`
	pidOf("sleep")
	status, _ = unary(t, srv, id, "CloseStdin", `{"process":`+sel+`}`)
	require.Equal(t, http.StatusOK, status)
	status, body = unary(t, srv, id, "CloseStdin", `{"process":`+sel+`}`)
	assert.Equal(t, http.StatusOK, status, "a second close is {}")
	assert.JSONEq(t, `{}`, body)
	status, body = unary(t, srv, id, "SendInput", `{"process":`+sel+`,"input":{"stdin":"eA=="}}`)
	assert.Equal(t, http.StatusInternalServerError, status, "writing after CloseStdin")
	assert.Contains(t, body, `"internal"`)
	status, _ = unary(t, srv, id, "SendSignal", `{"process":`+sel+`,"signal":"SIGNAL_UNSPECIFIED"}`)
	assert.Equal(t, http.StatusNotImplemented, status)
	status, _ = unary(t, srv, id, "SendSignal", `{"process":`+sel+`,"signal":"SIGNAL_SIGTERM"}`)
	assert.Equal(t, http.StatusOK, status)
	fs = <-sleepDone
	assert.JSONEq(t, `{"event":{"end":{"exitCode":-1,"status":"signal: terminated","error":"signal: terminated"}}}`, fs[len(fs)-2].json)

	ttyDone := background(`{"process":{"cmd":"/bin/sh","args":["-c","read x; echo got:$x"]},"pty":{"size":{"cols":100,"rows":30}},"tag":"tty"}`)
	sel = `{"pid":` + pidOf("tty") + `}`
	status, _ = unary(t, srv, id, "SendInput", `{"process":`+sel+`,"input":{"stdin":"eA=="}}`)
	assert.Equal(t, http.StatusInternalServerError, status, "stdin input to a terminal")
	status, body = unary(t, srv, id, "CloseStdin", `{"process":`+sel+`}`)
	assert.Equal(t, http.StatusInternalServerError, status, "a terminal has no stdin to close")
	assert.Contains(t, body, `"unknown"`)
	status, _ = unary(t, srv, id, "Update", `{"process":`+sel+`,"pty":{"size":{"cols":120,"rows":40}}}`)
	assert.Equal(t, http.StatusOK, status, "a terminal resizes")
	status, _ = unary(t, srv, id, "SendInput", `{"process":`+sel+`,"input":{"pty":"`+b64("yes\n")+`"}}`)
	require.Equal(t, http.StatusOK, status)
	fs = <-ttyDone
	assert.Contains(t, stdoutOf(t, fs), "got:yes\r\n", "terminal line endings")
}

// /files: multipart or octet-stream uploads create parents and answer the
// entry list as text/plain; downloads are raw; errors are envd's shapes;
// relative paths are the user's home.
func TestFilesRoutes(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base"})
	status, h, body := envd(t, srv, id, http.MethodPost, "/files?path=deep/dir/f.txt", "application/octet-stream", []byte("raw"), nil)
	require.Equal(t, http.StatusOK, status, string(body))
	assert.Equal(t, "text/plain; charset=utf-8", h.Get("Content-Type"))
	assert.JSONEq(t, `[{"name":"f.txt","path":"/home/user/deep/dir/f.txt","type":"file"}]`, string(body), "relative to the home, parents made")
	status, _, body = envd(t, srv, id, http.MethodGet, "/files?path=/home/user/deep/dir/f.txt", "", nil, nil)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "raw", string(body))
	status, _, _ = envd(t, srv, id, http.MethodPost, "/files", "application/octet-stream", []byte("raw"), nil)
	assert.Equal(t, http.StatusBadRequest, status, "octet-stream needs a path")
	status, _, _ = envd(t, srv, id, http.MethodPost, "/files?path=/tmp/x", "text/plain", []byte("raw"), nil)
	assert.Equal(t, http.StatusBadRequest, status, "another content type")
	status, _, body = envd(t, srv, id, http.MethodGet, "/files?path=/tmp/absent", "", nil, nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.JSONEq(t, `{"code":404,"message":"path '/tmp/absent' does not exist"}`, string(body))
	status, _, _ = envd(t, srv, id, http.MethodGet, "/files?path=/tmp", "", nil, nil)
	assert.Equal(t, http.StatusBadRequest, status, "a directory")
	srv.Fail("ENVD /files", e2btest.Status(http.StatusInsufficientStorage))
	status, _, _ = envd(t, srv, id, http.MethodPost, "/files?path=/tmp/y", "application/octet-stream", []byte("raw"), nil)
	assert.Equal(t, http.StatusInsufficientStorage, status, "507 on demand")
	// The files are the processes' files.
	_, fs := start(t, srv, id, `{"process":{"cmd":"cat","args":["deep/dir/f.txt"]}}`, nil)
	assert.Equal(t, "raw", stdoutOf(t, fs))
}

// A pause cuts open streams (no end-stream message), processes survive it,
// and the disk too.
func TestPauseCutsStreamsAndKeepsProcesses(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base", "autoPause": true})
	cut := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/process.Process/Start",
			bytes.NewReader(envelope(`{"process":{"cmd":"sleep","args":["30"]},"tag":"long"}`)))
		req.Header.Set("E2b-Sandbox-Id", id)
		req.Header.Set("Content-Type", "application/connect+json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			cut <- err
			return
		}
		defer res.Body.Close()
		_, err = io.ReadAll(res.Body)
		cut <- err
	}()
	require.Eventually(t, func() bool { _, body := unary(t, srv, id, "List", `{}`); return strings.Contains(body, "long") }, time.Minute, 5*time.Millisecond)
	status, _, _ := envd(t, srv, id, http.MethodPost, "/files?path=/tmp/kept", "application/octet-stream", []byte("disk"), nil)
	require.Equal(t, http.StatusOK, status)
	status, _, _ = call(t, srv, http.MethodPost, "/sandboxes/"+id+"/pause", nil)
	require.Equal(t, http.StatusNoContent, status)
	assert.Error(t, <-cut, "the stream is cut, with no end-stream")
	status, _, _ = envd(t, srv, id, http.MethodGet, "/health", "", nil, nil)
	assert.Equal(t, http.StatusBadGateway, status, "a paused sandbox's envd is the proxy's 502")
	status, _, _ = call(t, srv, http.MethodPost, "/sandboxes/"+id+"/connect", map[string]int{"timeout": 60})
	require.Equal(t, http.StatusCreated, status)
	_, body := unary(t, srv, id, "List", `{}`)
	assert.Contains(t, body, "long", "processes survive a pause")
	_, _, data := envd(t, srv, id, http.MethodGet, "/files?path=/tmp/kept", "", nil, nil)
	assert.Equal(t, "disk", string(data), "so does the disk")
}

// Egress follows the stored policy, the stand-in for a request out.
func TestEgressFollowsThePolicy(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base"})
	assert.True(t, srv.Egress(id, "example.com"), "no policy: open")
	status, _, _ := call(t, srv, http.MethodPut, "/sandboxes/"+id+"/network", map[string]any{"allowOut": []string{"example.com", "*.github.com"}, "denyOut": []string{"0.0.0.0/0"}})
	require.Equal(t, http.StatusNoContent, status)
	assert.True(t, srv.Egress(id, "example.com"))
	assert.True(t, srv.Egress(id, "api.github.com"))
	assert.False(t, srv.Egress(id, "evil.test"))
	status, _, _ = call(t, srv, http.MethodPut, "/sandboxes/"+id+"/network", map[string]any{"allowOut": []string{}, "denyOut": []string{"0.0.0.0/0"}})
	require.Equal(t, http.StatusNoContent, status)
	assert.False(t, srv.Egress(id, "example.com"), "allow nothing: closed")
}

// Keepalive-Ping-Interval: a silent stream gets keepalive events at that
// interval.
func TestKeepalives(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base"})
	_, fs := start(t, srv, id, `{"process":{"cmd":"sleep","args":["2.5"]}}`, http.Header{"Keepalive-Ping-Interval": {"1"}})
	n := 0
	for _, f := range fs {
		if strings.Contains(f.json, `"keepalive"`) {
			n++
		}
	}
	assert.GreaterOrEqual(t, n, 1, "a keepalive each silent second")
	assert.Contains(t, fs[len(fs)-2].json, `"end"`)
}

// The Filesystem service: Stat, MakeDir (parents made; an existing
// directory already_exists, a file invalid_argument), Move, ListDir (a
// file is invalid_argument), Remove (absent is fine), polling watchers
// (events handed out once; gone after removal) and WatchDir (start first;
// a missing directory not_found).
func TestFilesystemService(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base"})
	fsCall := func(method, request string) (int, string) {
		t.Helper()
		status, _, body := envd(t, srv, id, http.MethodPost, "/filesystem.Filesystem/"+method, "application/json", []byte(request), nil)
		return status, compact(body)
	}
	status, body := fsCall("Stat", `{"path":"/tmp/none"}`)
	assert.Equal(t, http.StatusNotFound, status, body)
	status, body = fsCall("MakeDir", `{"path":"/tmp/a/b"}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"type":"FILE_TYPE_DIRECTORY"`)
	assert.Contains(t, body, `"path":"/tmp/a/b"`)
	status, _ = fsCall("MakeDir", `{"path":"/tmp/a/b"}`)
	assert.Equal(t, http.StatusConflict, status, "already_exists")
	status, _, _ = envd(t, srv, id, http.MethodPost, "/files?path=/tmp/a/f.txt", "application/octet-stream", []byte("12345"), nil)
	require.Equal(t, http.StatusOK, status)
	status, _ = fsCall("MakeDir", `{"path":"/tmp/a/f.txt"}`)
	assert.Equal(t, http.StatusBadRequest, status, "a file is in the way")
	status, body = fsCall("Stat", `{"path":"/tmp/a/f.txt"}`)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, `"size":"5"`, "an int64 is a JSON string")
	assert.Contains(t, body, `"permissions":"-rw-r--r--"`)
	status, body = fsCall("ListDir", `{"path":"/tmp/a","depth":1}`)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, `"name":"b"`)
	assert.Contains(t, body, `"name":"f.txt"`)
	status, _ = fsCall("ListDir", `{"path":"/tmp/a/f.txt"}`)
	assert.Equal(t, http.StatusBadRequest, status)

	status, body = fsCall("CreateWatcher", `{"path":"/tmp/a"}`)
	require.Equal(t, http.StatusOK, status, body)
	var w struct {
		ID string `json:"watcherId"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &w))
	status, body = fsCall("Move", `{"source":"/tmp/a/f.txt","destination":"/tmp/a/g.txt"}`)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, `"path":"/tmp/a/g.txt"`)
	_, body = fsCall("GetWatcherEvents", `{"watcherId":"`+w.ID+`"}`)
	assert.Contains(t, body, `"name":"g.txt","type":"EVENT_TYPE_CREATE"`)
	assert.Contains(t, body, `"name":"f.txt","type":"EVENT_TYPE_REMOVE"`)
	_, body = fsCall("GetWatcherEvents", `{"watcherId":"`+w.ID+`"}`)
	assert.JSONEq(t, `{}`, body, "events are handed out once")
	status, _ = fsCall("RemoveWatcher", `{"watcherId":"`+w.ID+`"}`)
	require.Equal(t, http.StatusOK, status)
	status, _ = fsCall("GetWatcherEvents", `{"watcherId":"`+w.ID+`"}`)
	assert.Equal(t, http.StatusNotFound, status)

	status, body = fsCall("Remove", `{"path":"/tmp/a"}`)
	require.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{}`, body)
	status, _ = fsCall("Remove", `{"path":"/tmp/a"}`)
	assert.Equal(t, http.StatusOK, status, "an absent path is removed already")

	_, _, raw := envd(t, srv, id, http.MethodPost, "/filesystem.Filesystem/WatchDir", "application/connect+json", envelope(`{"path":"/tmp/none"}`), nil)
	fs := frames(t, raw)
	require.Len(t, fs, 1)
	assert.Contains(t, fs[0].json, `"not_found"`)
}

// The SDKs' create route (v2) makes secure sandboxes, the first form only
// on request. A secure sandbox's /files takes the access token, or else a
// signature of the call, which names its path, operation and user and
// may expire (by the server's clock), with envd's answers for each fault.
func TestFilesTakeASignature(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	assert.Empty(t, srv.AccessToken(create(t, srv, map[string]any{"templateID": "base"})), "the first form: not secure by default")
	status, _, data := call(t, srv, http.MethodPost, "/v2/sandboxes", map[string]any{"templateID": "base", "timeout": 3600})
	require.Equal(t, http.StatusCreated, status)
	var out struct {
		ID    string `json:"sandboxID"`
		Token string `json:"envdAccessToken"`
	}
	require.NoError(t, json.Unmarshal(data, &out))
	require.NotEmpty(t, out.Token, "v2: secure by default")
	status, _, data = call(t, srv, http.MethodPost, "/v2/sandboxes", map[string]any{"templateID": "base", "secure": false})
	require.Equal(t, http.StatusCreated, status)
	assert.NotContains(t, string(data), "envdAccessToken", "unless it says otherwise")

	token := http.Header{"X-Access-Token": {out.Token}}
	status, _, body := envd(t, srv, out.ID, http.MethodPost, "/files?path=/tmp/s.txt", "application/octet-stream", []byte("signed"), token)
	require.Equal(t, http.StatusOK, status, "%s", body)
	sign := func(path, op, user, exp string) string {
		raw := path + ":" + op + ":" + user + ":" + out.Token
		if exp != "" {
			raw += ":" + exp
		}
		sum := sha256.Sum256([]byte(raw))
		q := url.Values{"path": {path}, "signature": {"v1_" + base64.RawStdEncoding.EncodeToString(sum[:])}}
		if user != "" {
			q.Set("username", user)
		}
		if exp != "" {
			q.Set("signature_expiration", exp)
		}
		return "/files?" + q.Encode()
	}
	later := strconv.FormatInt(srv.Now().Add(time.Minute).Unix(), 10)
	cases := []struct {
		name   string
		path   string
		header http.Header
		status int
		msg    string
	}{
		{"signed", sign("/tmp/s.txt", "read", "", ""), nil, http.StatusOK, ""},
		{"signed for a user, expiring", sign("/tmp/s.txt", "read", "root", later), nil, http.StatusOK, ""},
		{"no signature", "/files?path=/tmp/s.txt", nil, http.StatusUnauthorized, "missing signature query parameter"},
		{"signed for writing", sign("/tmp/s.txt", "write", "", ""), nil, http.StatusUnauthorized, "invalid signature"},
		{"a wrong token", "/files?path=/tmp/s.txt", http.Header{"X-Access-Token": {"wrong"}}, http.StatusUnauthorized, "access token present in header but does not match"},
	}
	for _, tc := range cases {
		status, _, body := envd(t, srv, out.ID, http.MethodGet, tc.path, "", nil, tc.header)
		require.Equal(t, tc.status, status, "%s: %s", tc.name, body)
		if tc.msg != "" {
			assert.Contains(t, string(body), `"message":"`+tc.msg+`"`, tc.name)
		} else {
			assert.Equal(t, "signed", string(body), tc.name)
		}
	}
	srv.Advance(2 * time.Minute)
	status, _, body = envd(t, srv, out.ID, http.MethodGet, sign("/tmp/s.txt", "read", "root", later), "", nil, nil)
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Contains(t, string(body), "signature is already expired")
}

// File metadata as envd keeps it: an upload's X-Metadata-* headers (keys
// lowercased) become the file's user.e2b.* extended attributes, replacing
// what it had (a write without them clears them); the upload's answer,
// Stat and ListDir read them back from the file; metadata envd would
// refuse is a 400 and writes nothing.
func TestFileMetadata(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	id := create(t, srv, map[string]any{"templateID": "base"})
	upload := func(header http.Header) (int, string) {
		t.Helper()
		status, _, body := envd(t, srv, id, http.MethodPost, "/files?path=/tmp/m.txt", "application/octet-stream", []byte("data"), header)
		return status, compact(body)
	}
	stat := func() string {
		t.Helper()
		status, _, body := envd(t, srv, id, http.MethodPost, "/filesystem.Filesystem/Stat", "application/json", []byte(`{"path":"/tmp/m.txt"}`), nil)
		require.Equal(t, http.StatusOK, status)
		return compact(body)
	}
	status, body := upload(http.Header{"X-Metadata-Author": {"ada"}, "X-Metadata-Purpose": {"test run"}})
	require.Equal(t, http.StatusOK, status, body)
	assert.JSONEq(t, `[{"name":"m.txt","path":"/tmp/m.txt","type":"file","metadata":{"author":"ada","purpose":"test run"}}]`, body)
	assert.Contains(t, stat(), `"metadata":{"author":"ada","purpose":"test run"}`)
	status, _, raw := envd(t, srv, id, http.MethodPost, "/filesystem.Filesystem/ListDir", "application/json", []byte(`{"path":"/tmp","depth":1}`), nil)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, compact(raw), `"metadata":{"author":"ada","purpose":"test run"}`)

	status, body = upload(http.Header{"X-Metadata-Author": {"bob"}})
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"metadata":{"author":"bob"}`, "a write replaces the set")
	assert.NotContains(t, stat(), "purpose")

	status, body = upload(http.Header{"X-Metadata-" + strings.Repeat("k", 250): {"v"}})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, `invalid metadata: metadata key \"`+strings.Repeat("k", 250)+`\" exceeds 246 bytes`)
	assert.Contains(t, stat(), `"metadata":{"author":"bob"}`, "a refused write changes nothing")

	status, body = upload(nil)
	require.Equal(t, http.StatusOK, status, body)
	assert.NotContains(t, body, "metadata", "a write without metadata clears it")
	assert.NotContains(t, stat(), "metadata")
}
