package sprites_test

// What the adapter relies on of Sprites' exec protocol, each a test against
// spritestest: the WebSocket protocol, sessions, attach, kill, checkpoints
// and restore, and their failure modes.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/adapters/sprites"
	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/stretchr/testify/require"
)

// dialRaw opens an exec socket on srv without the adapter.
func dialRaw(t testing.TB, srv *spritestest.Server, path string, q url.Values) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	u := "ws" + strings.TrimPrefix(srv.URL(), "http") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	conn, res, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + srv.Token()}})
	if conn != nil {
		t.Cleanup(func() { _ = conn.Close() })
	}
	return conn, res, err
}

// readInfo reads the first message and decodes it as session info.
func readInfo(t testing.TB, conn *websocket.Conn) map[string]any {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	kind, data, err := conn.ReadMessage()
	require.NoError(t, err)
	require.Equal(t, websocket.TextMessage, kind, "session_info comes first")
	var info map[string]any
	require.NoError(t, json.Unmarshal(data, &info))
	require.Equal(t, "session_info", info["type"])
	return info
}

// spawn starts cmd on a new sprite and closes the stream at the end.
func spawn(t testing.TB, a *sprites.Adapter, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts) paddock.Stream {
	t.Helper()
	st, err := a.Spawn(ctxFor(t, 10*time.Second), h, cmd, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// nextStdout waits for the next stdout chunk.
func nextStdout(t testing.TB, st paddock.Stream) string {
	t.Helper()
	ev, err := st.Next(ctxFor(t, 5*time.Second))
	require.NoError(t, err)
	require.Equal(t, paddock.EventStdout, ev.Kind, "got %v", ev)
	return string(ev.Data)
}

// stdoutUntil reads stdout until it contains want.
func stdoutUntil(t testing.TB, st paddock.Stream, want string) string {
	t.Helper()
	var got string
	ctx := ctxFor(t, 5*time.Second)
	for !strings.Contains(got, want) {
		ev, err := st.Next(ctx)
		require.NoError(t, err, "waiting for %q, got %q", want, got)
		require.Equal(t, paddock.EventStdout, ev.Kind, "waiting for %q, got %q then %v", want, got, ev)
		got += string(ev.Data)
	}
	return got
}

// Exec query parsing: argv as repeated cmd, path, env (replacing the
// default), dir, tty, stdin and max_run_after_disconnect.
func TestExecQuery(t *testing.T) {
	t.Parallel()
	srv, a, h := onBox(t)
	ctx := ctxFor(t, 10*time.Second)
	require.NoError(t, a.WriteFile(ctx, h, "/work/.keep", 0o644, strings.NewReader("")))
	cmd := paddock.Cmd{Path: "sh", Args: []string{"-c", `echo "foo=$FOO home=${HOME:-none}"; pwd`},
		Env: []paddock.EnvVar{{Name: "FOO", Value: "a b"}}, Dir: "/work"}
	res, err := a.Exec(ctx, h, cmd, paddock.ExecOpts{})
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	require.Equal(t, "foo=a b home=none", lines[0], "env replaces the default environment")
	if srv.Mapped() {
		require.Equal(t, "/work", lines[1], "dir is the sprite's /work, as the sprite sees it")
	} else {
		require.True(t, strings.HasSuffix(lines[1], "/fs/work"), "dir is the sprite's /work: %s", lines[1])
	}

	reqs := srv.Requests()
	q, err := url.ParseQuery(reqs[len(reqs)-1].Query)
	require.NoError(t, err)
	require.Equal(t, url.Values{
		"cmd": {"sh", "-c", `echo "foo=$FOO home=${HOME:-none}"; pwd`}, "path": {"sh"}, "env": {"FOO=a b"}, "dir": {"/work"},
		"tty": {"false"}, "stdin": {"false"}, "max_run_after_disconnect": {"10s"},
	}, q, "Exec: no stdin, and an abandoned command stops 10 s after")

	st := spawn(t, a, h, paddock.NewCmd("cat"), paddock.SpawnOpts{Stdin: true, TTY: true})
	require.NoError(t, st.Close())
	reqs = srv.Requests()
	q, err = url.ParseQuery(reqs[len(reqs)-1].Query)
	require.NoError(t, err)
	require.Equal(t, url.Values{"cmd": {"cat"}, "path": {"cat"}, "tty": {"true"}, "stdin": {"true"}, "max_run_after_disconnect": {"0s"},
		"rows": {"24"}, "cols": {"80"}}, q,
		"Spawn: a detachable session that runs until it ends, on a terminal of 80x24 unless asked otherwise")

	_, err = a.Exec(ctx, h, paddock.Cmd{Path: "true", Dir: "/nowhere"}, paddock.ExecOpts{})
	requireKind(t, err, paddock.ErrInvalid)
}

// Command execution: session_info first with a decimal-string id;
// non-TTY output on stream ids 1 and 2 and the exit byte; TTY output raw
// with the exit as JSON text and no stderr.
func TestCommandFraming(t *testing.T) {
	t.Parallel()
	_, a, h := onBox(t)
	st := spawn(t, a, h, paddock.NewCmd("sh", "-c", "echo out; echo err >&2; exit 7"), paddock.SpawnOpts{})
	require.Regexp(t, `^[0-9]+$`, st.SessionID())
	stdout, stderr, last := drain(t, st)
	require.Equal(t, "out\n", stdout)
	require.Equal(t, "err\n", stderr)
	require.Equal(t, paddock.Exit(7), last)

	tty := spawn(t, a, h, paddock.NewCmd("sh", "-c", "stty size; echo err >&2; exit 5"), paddock.SpawnOpts{TTY: true})
	stdout, stderr, last = drain(t, tty)
	require.Contains(t, stdout, "24 80", "the default terminal size")
	require.Contains(t, stdout, "err", "a terminal has no separate stderr")
	require.Empty(t, stderr)
	require.Equal(t, paddock.Exit(5), last)

	for _, code := range []int{0, 1, 42, 127, 128, 130, 255} {
		res, err := a.Exec(ctxFor(t, 5*time.Second), h, paddock.NewCmd("sh", "-c", "exit "+strconv.Itoa(code)), paddock.ExecOpts{})
		require.NoError(t, err)
		require.Equal(t, code, res.ExitCode)
	}
	res, err := a.Exec(ctxFor(t, 5*time.Second), h, paddock.NewCmd("no-such-program"), paddock.ExecOpts{StderrToStdout: true})
	require.NoError(t, err)
	require.Equal(t, 127, res.ExitCode, "a command that cannot start exits 127, as a shell says")
}

// The first message of an exec and of every attach is session_info:
// the creator is the owner, attachers are not; both attach forms work; an
// unknown session fails the handshake with 404.
func TestSessionInfoAndAttachForms(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.AddSprite("box")
	conn, res, err := dialRaw(t, srv, "/v1/sprites/box/exec", url.Values{"cmd": {"sh", "-c", "echo hi; exec cat"}, "stdin": {"true"}})
	require.NoError(t, err)
	require.Equal(t, "signal", res.Header.Get("X-Sprite-Capabilities"))
	info := readInfo(t, conn)
	id, isString := info["session_id"].(string)
	require.True(t, isString, "a decimal string")
	require.Regexp(t, `^[0-9]+$`, id)
	require.Equal(t, true, info["is_owner"])
	require.Equal(t, false, info["tty"])
	_, first, err := conn.ReadMessage()
	require.NoError(t, err)
	require.Equal(t, append([]byte{1}, "hi\n"...), first)

	for _, form := range []struct {
		path  string
		query url.Values
	}{{"/v1/sprites/box/exec/" + id, nil}, {"/v1/sprites/box/exec", url.Values{"id": {id}}}} {
		at, _, err := dialRaw(t, srv, form.path, form.query)
		require.NoError(t, err, form.path)
		info := readInfo(t, at)
		require.Equal(t, false, info["is_owner"])
		require.Equal(t, id, info["session_id"])
		_, replay, err := at.ReadMessage()
		require.NoError(t, err)
		require.Equal(t, first, replay, "the scrollback, framed as stdout")
		require.NoError(t, at.Close())
	}
	for _, form := range []struct {
		path  string
		query url.Values
	}{{"/v1/sprites/box/exec/999999", nil}, {"/v1/sprites/box/exec", url.Values{"id": {"999999"}}}} {
		_, res, err := dialRaw(t, srv, form.path, form.query)
		require.Error(t, err)
		require.Equal(t, http.StatusNotFound, res.StatusCode)
	}
}

// Client frames: stdin and its end (non-TTY), raw stdin (TTY), and
// the resize and signal text messages.
func TestClientFrames(t *testing.T) {
	t.Parallel()
	srv, a, h := onBox(t)
	tty := spawn(t, a, h, paddock.NewCmd("sh", "-c", "read x; echo got:$x"), paddock.SpawnOpts{TTY: true, Stdin: true})
	require.NoError(t, tty.WriteStdin(ctxFor(t, 5*time.Second), []byte("abc\n")))
	stdoutUntil(t, tty, "got:abc")

	conn, _, err := dialRaw(t, srv, "/v1/sprites/box/exec", url.Values{"cmd": {"sh", "-c", "read x; stty size"}, "tty": {"true"}})
	require.NoError(t, err)
	readInfo(t, conn)
	require.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"resize","cols":100,"rows":30}`)))
	require.NoError(t, conn.WriteMessage(websocket.BinaryMessage, []byte("\n")))
	var out string
	for !strings.Contains(out, "30 100") {
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, data, err := conn.ReadMessage()
		require.NoError(t, err, "output so far %q", out)
		out += string(data)
	}

	conn, _, err = dialRaw(t, srv, "/v1/sprites/box/exec", url.Values{"cmd": {"sleep", "100"}})
	require.NoError(t, err)
	readInfo(t, conn)
	require.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"signal","signal":"TERM"}`)))
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, data, err := conn.ReadMessage()
	require.NoError(t, err)
	require.Equal(t, []byte{3, 143}, data, "the signalled process exits 128+15")
}

// Close sequence and exit-hold timing: the server holds the socket about
// 5 s after the exit; the adapter does not wait for it.
func TestExitHoldIsNotWaitedFor(t *testing.T) {
	t.Parallel()
	srv := newServer(t, spritestest.WithExitHold(10*time.Minute)) // production holds 5 s; this one long enough to tell
	a := newAdapter(t, srv)
	h := create(t, a, "box")
	start := time.Now()
	res, err := a.Exec(ctxFor(t, 10*time.Minute), h, paddock.NewCmd("echo", "quick"), paddock.ExecOpts{})
	require.NoError(t, err)
	require.Equal(t, "quick\n", string(res.Stdout))
	require.Less(t, time.Since(start), 5*time.Minute, "Exec returns at the exit frame, not when the server lets go")
}

// The server, like production, holds an exec socket 5 s after the exit,
// then closes it normally.
func TestServerHoldsTheSocketAfterTheExit(t *testing.T) {
	t.Parallel()
	srv := newServer(t) // production's 5 s hold
	srv.AddSprite("box")
	conn, _, err := dialRaw(t, srv, "/v1/sprites/box/exec", url.Values{"cmd": {"true"}})
	require.NoError(t, err)
	readInfo(t, conn)
	_, exit, err := conn.ReadMessage()
	require.NoError(t, err)
	require.Equal(t, []byte{3, 0}, exit)
	exitAt := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Minute)) // a hang bound
	_, _, err = conn.ReadMessage()
	require.True(t, websocket.IsCloseError(err, websocket.CloseNormalClosure), "then a normal close: %v", err)
	// A loaded machine may add to the hold, never take from it.
	require.GreaterOrEqual(t, time.Since(exitAt), 4500*time.Millisecond, "the close comes after the hold")
}

// Close sequence, TTY attach: the exit message, then a TCP drop
// without a close frame; the exit stands.
func TestTTYAttachEndsWithoutACloseFrame(t *testing.T) {
	t.Parallel()
	srv := newServer(t, spritestest.WithExitHold(50*time.Millisecond))
	a := newAdapter(t, srv)
	h := create(t, a, "box")
	owner := spawn(t, a, h, paddock.NewCmd("sh", "-c", "echo ready; read x; exit 3"), paddock.SpawnOpts{TTY: true, Stdin: true})
	stdoutUntil(t, owner, "ready")
	at, err := a.Attach(ctxFor(t, 5*time.Second), h, owner.SessionID(), paddock.AttachOpts{Stdin: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = at.Close() })
	stdoutUntil(t, at, "ready")
	require.NoError(t, at.WriteStdin(ctxFor(t, 5*time.Second), []byte("go\n")))
	_, _, last := drain(t, at)
	require.Equal(t, paddock.Exit(3), last)

	conn, _, err := dialRaw(t, srv, "/v1/sprites/box/exec", url.Values{"cmd": {"sh", "-c", "echo x; sleep 0.3"}, "tty": {"true"}})
	require.NoError(t, err)
	id := readInfo(t, conn)["session_id"].(string)
	raw, _, err := dialRaw(t, srv, "/v1/sprites/box/exec/"+id, nil)
	require.NoError(t, err)
	readInfo(t, raw)
	var exitSeen bool
	for {
		_ = raw.SetReadDeadline(time.Now().Add(5 * time.Second))
		kind, data, err := raw.ReadMessage()
		if err != nil {
			require.True(t, exitSeen)
			require.False(t, websocket.IsCloseError(err, websocket.CloseNormalClosure), "no close frame: %v", err)
			break
		}
		if kind == websocket.TextMessage {
			require.JSONEq(t, `{"type":"exit","exit_code":0}`, string(data))
			exitSeen = true
		}
	}
}

// The shortened keepalive of the tests below: short enough that a quiet
// command outlives it several times over. Silence is counted in the
// pinger's ticks, so a loaded machine that starves the process (CI runs
// the load cases beside these) does not make a live socket look silent:
// with a read deadline, 300 ms and once 1.5 s did.
const (
	testPing = 100 * time.Millisecond
	testWait = 1500 * time.Millisecond
)

// Keepalive: the server answers pings, so a quiet command survives a
// short keepalive; a silent server that answers none is given up.
func TestKeepalive(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newAdapter(t, srv)
	sprites.SetKeepalive(a, testPing, testWait)
	h := create(t, a, "box")
	st := spawn(t, a, h, paddock.NewCmd("sh", "-c", "sleep 4; echo done"), paddock.SpawnOpts{})
	stdout, _, last := drain(t, st)
	require.Equal(t, "done\n", stdout)
	require.Equal(t, paddock.Exit(0), last)

	srv.Script(spritestest.Script{Frames: []spritestest.Frame{spritestest.StdoutFrame("hello\n")}, End: spritestest.EndHang})
	st = spawn(t, a, h, paddock.NewCmd("anything"), paddock.SpawnOpts{})
	require.Equal(t, "hello\n", nextStdout(t, st))
	// The server never answers again: only the keepalive's wait ends it
	// (the context would end Next with its own error, not an event).
	ev, err := st.Next(ctxFor(t, 10*time.Minute))
	require.NoError(t, err)
	requireKind(t, ev.Err, paddock.ErrClosedBeforeExit)
}

// A consumer that stops reading for longer than the keepalive's wait is
// slow, not gone: the socket is not given up while the adapter itself
// holds it back, and every byte and the exit still arrive.
func TestASlowConsumerIsNotMistakenForADeadSocket(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newAdapter(t, srv)
	sprites.SetKeepalive(a, testPing, testWait)
	h := create(t, a, "slow-reader")
	st := spawn(t, a, h, paddock.NewCmd("seq", "1", "1000000"), paddock.SpawnOpts{})
	first := nextStdout(t, st)
	time.Sleep(2 * testWait) // the read-ahead fills up and the reader waits for room past the wait
	stdout, _, last := drain(t, st)
	require.Equal(t, paddock.Exit(0), last)
	want := seqOutput(1, 1000000)
	require.Equal(t, len(want), len(first)+len(stdout))
	require.Equal(t, want, first+stdout)
}

// seqOutput is what `seq from to` prints.
func seqOutput(from, to int) string {
	var b strings.Builder
	for n := from; n <= to; n++ {
		b.WriteString(strconv.Itoa(n))
		b.WriteByte('\n')
	}
	return b.String()
}

// Detach semantics: a session outlives its client for
// max_run_after_disconnect, then ends; 0 keeps it until it ends.
func TestDetachKeepsTheSession(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		maxRun time.Duration
		alive  bool
	}{
		{"runs on until it ends (0)", 0, true},
		{"stopped 300 ms after the last client left", 300 * time.Millisecond, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t)
			a := newAdapter(t, srv, func(cfg *sprites.Config) { cfg.MaxRunAfterDisconnect = c.maxRun })
			h := create(t, a, "box")
			st := spawn(t, a, h, paddock.NewCmd("sh", "-c", "echo started; exec sleep 100"), paddock.SpawnOpts{})
			require.Equal(t, "started\n", nextStdout(t, st))
			id := st.SessionID()
			require.NoError(t, st.Close())
			time.Sleep(time.Second)
			sessions, err := a.ListSessions(ctxFor(t, 5*time.Second), h)
			require.NoError(t, err)
			if !c.alive {
				require.Empty(t, sessions)
				return
			}
			require.Len(t, sessions, 1)
			require.Equal(t, id, sessions[0].ID)
			at, err := a.Attach(ctxFor(t, 5*time.Second), h, id, paddock.AttachOpts{})
			require.NoError(t, err)
			require.Equal(t, "started\n", nextStdout(t, at), "the scrollback survives the detach")
			require.NoError(t, at.Close())
			require.NoError(t, a.TerminateSession(ctxFor(t, 10*time.Second), h, id, paddock.TerminateOpts{}))
		})
	}
}

// Attach: replay then live output; attach edge cases: a
// session that ends during replay gets its exit after the replay; a dead
// id is not_found; a TTY session is decoded as one, whatever the caller
// assumed.
func TestAttach(t *testing.T) {
	t.Parallel()
	_, a, h := onBox(t)
	ctx := ctxFor(t, 10*time.Second)

	owner := spawn(t, a, h, paddock.NewCmd("sh", "-c", "echo one; sleep 0.1; echo two >&2; read x; echo three; sleep 0.2; exit 4"), paddock.SpawnOpts{Stdin: true})
	stdoutUntil(t, owner, "one")
	ev, err := owner.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, paddock.Stderr([]byte("two\n")), ev)
	at, err := a.Attach(ctx, h, owner.SessionID(), paddock.AttachOpts{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = at.Close() })
	require.Equal(t, owner.SessionID(), at.SessionID())
	require.NoError(t, owner.WriteStdin(ctx, []byte("go\n")))
	stdout, stderr, last := drain(t, at)
	require.Equal(t, "one\nthree\n", stdout, "the replay from byte zero, then the tail")
	require.Equal(t, "two\n", stderr, "stderr keeps its stream in the replay")
	require.Equal(t, paddock.Exit(4), last)

	_, err = a.Attach(ctx, h, owner.SessionID(), paddock.AttachOpts{})
	requireKind(t, err, paddock.ErrNotFound, "an ended session cannot be attached")
	_, err = a.Attach(ctx, h, "424242", paddock.AttachOpts{})
	requireKind(t, err, paddock.ErrNotFound)
	_, err = a.Attach(ctx, h, "../x", paddock.AttachOpts{})
	requireKind(t, err, paddock.ErrInvalid)

	tty := spawn(t, a, h, paddock.NewCmd("sh", "-c", "echo term; exec cat"), paddock.SpawnOpts{TTY: true, Stdin: true})
	stdoutUntil(t, tty, "term")
	at, err = a.Attach(ctx, h, tty.SessionID(), paddock.AttachOpts{Stdin: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = at.Close() })
	require.Contains(t, stdoutUntil(t, at, "term"), "term", "raw terminal bytes, not stream-id framed")
	require.NoError(t, at.WriteStdin(ctx, []byte("typed\n")))
	stdoutUntil(t, tty, "typed")
}

// Session list: the object form with Sprites' fields; the command
// is the resolved path plus arguments; an ended session leaves at once.
func TestSessionList(t *testing.T) {
	t.Parallel()
	srv, a, h := onBox(t)
	ctx := ctxFor(t, 10*time.Second)
	st := spawn(t, a, h, paddock.NewCmd("sleep", "654"), paddock.SpawnOpts{})
	quick := spawn(t, a, h, paddock.NewCmd("true"), paddock.SpawnOpts{})
	_, _, last := drain(t, quick)
	require.Equal(t, paddock.Exit(0), last)
	sessions, err := a.ListSessions(ctx, h)
	require.NoError(t, err)
	require.Len(t, sessions, 1, "the ended session is gone at once")
	s := sessions[0]
	require.Equal(t, st.SessionID(), s.ID)
	require.Regexp(t, `^/.*/sleep 654$`, s.Command, "the resolved path and the arguments")
	require.WithinDuration(t, time.Now(), s.CreatedAt, time.Minute)
	require.False(t, s.TTY)

	res := rawRequest(t, srv, http.MethodGet, "/v1/sprites/box/exec", true)
	var body struct {
		Sessions []map[string]any
		Count    int
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
	require.Equal(t, 1, body.Count)
	for _, f := range []string{"id", "command", "workdir", "created", "bytes_per_second", "is_active", "last_activity", "tty"} {
		require.Contains(t, body.Sessions[0], f)
	}
	res = rawRequest(t, srv, http.MethodGet, "/v1/sprites/box/exec/"+st.SessionID(), true)
	require.Equal(t, http.StatusOK, res.StatusCode)
	res = rawRequest(t, srv, http.MethodGet, "/v1/sprites/box/exec/1", true)
	require.Equal(t, http.StatusNotFound, res.StatusCode)

	srv.Fail("GET /v1/sprites/{name}/exec", spritestest.Body(200, `[{"id":20,"command":"/bin/sh","tty":true}]`))
	sessions, err = a.ListSessions(ctx, h)
	require.NoError(t, err, "a bare array is read too")
	require.Equal(t, []paddock.Session{{ID: "20", Command: "/bin/sh", TTY: true, State: paddock.SessionRunning}}, sessions, "a listed session runs: Sprites lists no other")
	srv.Fail("GET /v1/sprites/{name}/exec", spritestest.Body(200, `{"sessions":"nope"}`))
	_, err = a.ListSessions(ctx, h)
	requireKind(t, err, paddock.ErrProvider)
}

// killStream posts a kill and returns its NDJSON events.
func killStream(t testing.TB, srv *spritestest.Server, name, id, query string) (int, []map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/sprites/"+name+"/exec/"+id+"/kill?"+query, nil)
	req.Header.Set("Authorization", "Bearer "+srv.Token())
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var events []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(l), &ev) == nil {
			events = append(events, ev)
		}
	}
	return res.StatusCode, events
}

func types(events []map[string]any) []string {
	out := make([]string, 0, len(events))
	for _, e := range events {
		out = append(out, e["type"].(string))
	}
	return out
}

// Kill: the signal to the group, exited or timeout and killed, then
// complete with 143 (TERM) or 137 (KILL); the session is gone; an unknown
// one is 404. Through the adapter, both modes confirm.
func TestKill(t *testing.T) {
	t.Parallel()
	srv, a, h := onBox(t)
	start := func(cmd paddock.Cmd) string {
		st := spawn(t, a, h, cmd, paddock.SpawnOpts{})
		nextStdout(t, st)
		return st.SessionID()
	}
	id := start(paddock.NewCmd("sh", "-c", "echo up; exec sleep 100"))
	status, events := killStream(t, srv, "box", id, "signal=TERM&timeout=5s")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, []string{"signal", "exited", "complete"}, types(events))
	require.Equal(t, "SIGTERM", events[0]["signal"])
	require.Greater(t, events[0]["pid"].(float64), 0.0)
	require.Equal(t, 143.0, events[2]["exit_code"])

	id = start(paddock.NewCmd("sh", "-c", "trap '' TERM; echo up; while :; do sleep 0.05; done"))
	_, events = killStream(t, srv, "box", id, "signal=SIGTERM&timeout=200ms")
	require.Equal(t, []string{"signal", "timeout", "killed", "complete"}, types(events))
	require.Equal(t, 137.0, events[3]["exit_code"])

	status, _ = killStream(t, srv, "box", id, "")
	require.Equal(t, http.StatusNotFound, status, "an ended session is unknown")
	status, _ = killStream(t, srv, "box", "1", "signal=BOGUS")
	require.Equal(t, http.StatusBadRequest, status)

	for _, mode := range []paddock.TerminateMode{paddock.TerminateGraceful, paddock.TerminateForce} {
		st := spawn(t, a, h, paddock.NewCmd("sh", "-c", "echo up; exec sleep 100"), paddock.SpawnOpts{})
		nextStdout(t, st)
		require.NoError(t, a.TerminateSession(ctxFor(t, 10*time.Second), h, st.SessionID(), paddock.TerminateOpts{Mode: mode}))
		_, _, last := drain(t, st)
		want := 143
		if mode == paddock.TerminateForce {
			want = 137
		}
		require.Equal(t, paddock.Exit(want), last, "the subscriber sees the kill's exit")
		sessions, err := a.ListSessions(ctxFor(t, 5*time.Second), h)
		require.NoError(t, err)
		require.Empty(t, sessions)
	}
}

// Checkpoints and restore: v0 from creation; a new one is listed
// newest first after its stream ends; restore ends sessions and returns
// the files; an unknown id fails inside the 200 stream.
func TestCheckpointsAndRestore(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newAdapter(t, srv, withCheckpoints)
	h := create(t, a, "box")
	ctx := ctxFor(t, 20*time.Second)
	cps, err := a.ListCheckpoints(ctx, h)
	require.NoError(t, err)
	require.Len(t, cps, 1)
	require.Equal(t, "v0", cps[0].ID)

	require.NoError(t, a.WriteFile(ctx, h, "/data/f", 0o644, strings.NewReader("before")))
	id, err := a.CreateCheckpoint(ctx, h, paddock.CheckpointOpts{Comment: "first"})
	require.NoError(t, err)
	require.Equal(t, "v1", id)
	id2, err := a.CreateCheckpoint(ctx, h, paddock.CheckpointOpts{})
	require.NoError(t, err, "a checkpoint without a comment is found by a unique one")
	require.Equal(t, "v2", id2)
	cps, err = a.ListCheckpoints(ctx, h)
	require.NoError(t, err)
	require.Equal(t, []string{"v2", "v1", "v0"}, []string{cps[0].ID, cps[1].ID, cps[2].ID}, "newest first, Current left out")
	require.Equal(t, "first", cps[1].Comment)
	require.False(t, cps[1].CreatedAt.IsZero())

	res := rawRequest(t, srv, http.MethodGet, "/v1/sprites/box/checkpoints/v1", true)
	require.Equal(t, http.StatusOK, res.StatusCode)
	res = rawRequest(t, srv, http.MethodGet, "/v1/sprites/box/checkpoints/v9", true)
	require.Equal(t, http.StatusNotFound, res.StatusCode)

	require.NoError(t, a.WriteFile(ctx, h, "/data/f", 0o644, strings.NewReader("after")))
	st := spawn(t, a, h, paddock.NewCmd("sh", "-c", "echo up; exec sleep 100"), paddock.SpawnOpts{})
	nextStdout(t, st)
	require.NoError(t, a.RestoreCheckpoint(ctx, h, id))
	b, _ := srv.File("box", "/data/f")
	require.Equal(t, "before", string(b))
	_, _, last := drain(t, st)
	require.True(t, last.Kind.Terminal(), "restore ends the sessions")

	err = a.RestoreCheckpoint(ctx, h, "v9")
	requireKind(t, err, paddock.ErrRestoreFailed, "a failure inside a 200 stream")
	require.Contains(t, err.Error(), "v9")
	srv.Fail("POST /v1/sprites/{name}/checkpoints/{id}/restore", spritestest.Status(404))
	requireKind(t, a.RestoreCheckpoint(ctx, h, "v1"), paddock.ErrNotFound)
	srv.Fail("POST /v1/sprites/{name}/checkpoints/{id}/restore", spritestest.Body(200, `{"type":"info","data":"Restoring"}`+"\n"))
	requireKind(t, a.RestoreCheckpoint(ctx, h, "v1"), paddock.ErrUnavailable, "no completion: unknown")
	srv.Fail("POST /v1/sprites/{name}/checkpoint", spritestest.Body(200, `{"type":"error","error":"disk full"}`+"\n"))
	_, err = a.CreateCheckpoint(ctx, h, paddock.CheckpointOpts{})
	requireKind(t, err, paddock.ErrProvider)

	off := newAdapter(t, srv)
	before := len(srv.Requests())
	_, err = off.CreateCheckpoint(ctx, h, paddock.CheckpointOpts{})
	requireKind(t, err, paddock.ErrNotSupported)
	requireKind(t, off.RestoreCheckpoint(ctx, h, "v1"), paddock.ErrNotSupported)
	_, err = off.ListCheckpoints(ctx, h)
	requireKind(t, err, paddock.ErrNotSupported)
	require.Len(t, srv.Requests(), before, "the setting off touches nothing")
	require.False(t, off.Capabilities().Has(paddock.CapCheckpoint))
	require.True(t, a.Capabilities().Has(paddock.CapCreateCheckpointOnce))
}

// Exec upgrade refused: 503 while a new sprite starts is waited out
// (a refused upgrade ran nothing) for WakeAttempts tries; 401, 404 and a
// structured 429 are answered at once.
func TestExecUpgradeRefused(t *testing.T) {
	t.Parallel()
	const route = "WS /v1/sprites/{name}/exec"
	srv := newServer(t, spritestest.WithColdStart(2))
	a := newAdapter(t, srv)
	h := create(t, a, "box")
	ctx := ctxFor(t, 20*time.Second)
	res, err := a.Exec(ctx, h, paddock.NewCmd("echo", "awake"), paddock.ExecOpts{})
	require.NoError(t, err, "the first exec after create waits out the start")
	require.Equal(t, "awake\n", string(res.Stdout))
	require.Equal(t, 3, srv.Count(route), "two refusals, then the command, once")

	once := newAdapter(t, srv, func(c *sprites.Config) { c.WakeAttempts = 1 })
	other := create(t, once, "other")
	for range 2 {
		srv.Fail(route, spritestest.Status(503))
	}
	before := srv.Count(route)
	_, err = once.Exec(ctx, other, paddock.NewCmd("true"), paddock.ExecOpts{})
	requireKind(t, err, paddock.ErrUnavailable, "a starting sprite is transient")
	require.Equal(t, before+1, srv.Count(route), "WakeAttempts 1: no retry")
	_, err = once.Spawn(ctx, other, paddock.NewCmd("true"), paddock.SpawnOpts{})
	requireKind(t, err, paddock.ErrUnavailable)

	for _, c := range []struct {
		fault spritestest.Fault
		kind  error
	}{{spritestest.Status(401), paddock.ErrDenied}, {spritestest.Status(404), paddock.ErrNotFound}, {spritestest.Status(500), paddock.ErrUnavailable}} {
		srv.Fail(route, c.fault)
		before := srv.Count(route)
		_, err = a.Spawn(ctx, h, paddock.NewCmd("true"), paddock.SpawnOpts{})
		requireKind(t, err, c.kind)
		require.Equal(t, before+1, srv.Count(route), "only 503 is waited out")
	}
	_, err = a.Spawn(ctx, a.BuildHandle("absent"), paddock.NewCmd("true"), paddock.SpawnOpts{})
	requireKind(t, err, paddock.ErrNotFound)
	srv.Fail(route, spritestest.RateLimited(9))
	_, err = a.Spawn(ctx, h, paddock.NewCmd("true"), paddock.SpawnOpts{})
	var rl *paddock.RateLimitedError
	require.ErrorAs(t, err, &rl)
	require.Equal(t, 9*time.Second, *rl.RetryAfter)
	captured.Err(err)
}

// WebSocket faults, each scripted: how the socket ends, the exit
// frame's variants, and frames to ignore.
func TestScriptedSockets(t *testing.T) {
	t.Parallel()
	out := spritestest.StdoutFrame
	closedBeforeExit := paddock.Failed(paddock.ErrClosedBeforeExit)
	cases := []struct {
		name   string
		script spritestest.Script
		stdout string
		last   paddock.Event
	}{
		{"normal close after output, no exit", spritestest.Script{Frames: []spritestest.Frame{out("partial")}, End: spritestest.EndClose}, "partial", closedBeforeExit},
		{"close 1011, no exit", spritestest.Script{Frames: []spritestest.Frame{out("partial")}, End: spritestest.EndCloseAbnormal}, "partial", closedBeforeExit},
		{"TCP reset, no close frame", spritestest.Script{Frames: []spritestest.Frame{out("partial")}, End: spritestest.EndReset}, "partial", closedBeforeExit},
		{"exit and close in one write", spritestest.Script{Frames: []spritestest.Frame{out("all"), spritestest.ExitFrame(42)}, End: spritestest.EndSameWrite}, "all", paddock.Exit(42)},
		{"exit then reset", spritestest.Script{Frames: []spritestest.Frame{spritestest.ExitFrame(9)}, End: spritestest.EndReset}, "", paddock.Exit(9)},
		{"exit then a hang", spritestest.Script{Frames: []spritestest.Frame{spritestest.ExitFrame(3)}, End: spritestest.EndHang}, "", paddock.Exit(3)},
		{"exit with trailing bytes", spritestest.Script{Frames: []spritestest.Frame{spritestest.BinaryFrame(3, 42, 0, 0, 0)}, End: spritestest.EndClose}, "", paddock.Exit(42)},
		{"exit with no code is 0", spritestest.Script{Frames: []spritestest.Frame{spritestest.BinaryFrame(3)}, End: spritestest.EndClose}, "", paddock.Exit(0)},
		{"exit as JSON text without a tty", spritestest.Script{Frames: []spritestest.Frame{spritestest.ExitTextFrame(17)}, End: spritestest.EndClose}, "", paddock.Exit(17)},
		{"frames to ignore", spritestest.Script{Frames: []spritestest.Frame{
			spritestest.BinaryFrame(9, 'x'), spritestest.BinaryFrame(), spritestest.TextFrame("not json"),
			spritestest.TextFrame(`{"type":"mystery"}`), spritestest.TextFrame(`{"type":"port_opened","port":8080,"address":"0.0.0.0","pid":7}`),
			spritestest.TextFrame("control:{}"), spritestest.BinaryFrame(1), out("kept"), spritestest.ExitFrame(0), out("after exit"),
		}, End: spritestest.EndHold}, "kept", paddock.Exit(0)},
		{"truncated mid-command", spritestest.Script{Frames: []spritestest.Frame{out("a"), out("b")}, End: spritestest.EndReset}, "ab", closedBeforeExit},
		{"scrollback before session_info", spritestest.Script{BeforeInfo: []spritestest.Frame{out("early ")}, Frames: []spritestest.Frame{out("late"), spritestest.ExitFrame(0)}, End: spritestest.EndHold}, "early late", paddock.Exit(0)},
		{"a numeric session id", spritestest.Script{NumericID: true, Frames: []spritestest.Frame{spritestest.ExitFrame(0)}, End: spritestest.EndHold}, "", paddock.Exit(0)},
		// A JSON exit with a code no process has: the command ended, its
		// code is unknown, and none is made up (nor is the hold waited out).
		{"a JSON exit code of -1", spritestest.Script{Frames: []spritestest.Frame{out("x"), spritestest.TextFrame(`{"type":"exit","exit_code":-1}`)}, End: spritestest.EndHold}, "x", closedBeforeExit},
		{"a JSON exit code past 255", spritestest.Script{Frames: []spritestest.Frame{spritestest.TextFrame(`{"type":"exit","exit_code":99999999999}`)}, End: spritestest.EndHold}, "", closedBeforeExit},
		{"a JSON exit code as a string", spritestest.Script{Frames: []spritestest.Frame{spritestest.TextFrame(`{"type":"exit","exit_code":"5"}`)}, End: spritestest.EndHold}, "", closedBeforeExit},
		{"a fractional JSON exit code", spritestest.Script{Frames: []spritestest.Frame{spritestest.TextFrame(`{"type":"exit","exit_code":1.5}`)}, End: spritestest.EndHold}, "", closedBeforeExit},
		{"a JSON exit without a code", spritestest.Script{Frames: []spritestest.Frame{spritestest.TextFrame(`{"type":"exit"}`)}, End: spritestest.EndHold}, "", closedBeforeExit},
		// Only the first session_info sets the framing: a later one saying
		// tty must not turn the binary exit frame into terminal output.
		{"a second session_info mid-stream", spritestest.Script{Frames: []spritestest.Frame{out("a"),
			spritestest.TextFrame(`{"type":"session_info","session_id":"99","command":"x","created":1,"cols":0,"rows":0,"is_owner":true,"tty":true}`),
			out("b"), spritestest.ExitFrame(7)}, End: spritestest.EndHold}, "ab", paddock.Exit(7)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, spritestest.WithExitHold(10*time.Minute))
			a := newAdapter(t, srv)
			h := create(t, a, "box")
			srv.Script(c.script)
			st := spawn(t, a, h, paddock.NewCmd("scripted"), paddock.SpawnOpts{})
			require.Regexp(t, `^[0-9]+$`, st.SessionID())
			start := time.Now()
			stdout, stderr, last := drain(t, st)
			require.Less(t, time.Since(start), 5*time.Minute, "the terminal event does not wait for the server (a 10-minute hold, or a hang)")
			require.Equal(t, c.stdout, stdout)
			require.Empty(t, stderr)
			require.Equal(t, c.last.Kind, last.Kind)
			if last.Kind == paddock.EventExit {
				require.Equal(t, c.last.Code, last.Code)
			} else {
				requireKind(t, last.Err, paddock.ErrClosedBeforeExit)
			}
			_, err := st.Next(ctxFor(t, time.Second))
			require.ErrorIs(t, err, io.EOF, "nothing after the terminal event")
			requireKind(t, st.WriteStdin(ctxFor(t, time.Second), []byte("late")), paddock.ErrCommandExited,
				"stdin racing the exit is command_exited, never a crash")

			// Exec sees the same: data for an exit, an error for no exit.
			srv.Script(c.script)
			res, err := a.Exec(ctxFor(t, 5*time.Second), h, paddock.NewCmd("scripted"), paddock.ExecOpts{})
			if c.last.Kind == paddock.EventExit {
				require.NoError(t, err)
				require.Equal(t, c.last.Code, res.ExitCode)
				require.Equal(t, c.stdout, string(res.Stdout))
			} else {
				requireKind(t, err, paddock.ErrClosedBeforeExit)
				require.Empty(t, res.Stdout, "partial output is discarded")
			}
		})
	}
	t.Run("no session_info", func(t *testing.T) {
		srv := newServer(t)
		h := create(t, newAdapter(t, srv), "box")
		// Only the spawn runs on the short timeout; the create keeps the
		// default, so a slow machine cannot fail the setup.
		a := newAdapter(t, srv, func(c *sprites.Config) { c.Timeout = 300 * time.Millisecond })
		srv.Script(spritestest.Script{NoInfo: true, End: spritestest.EndHang})
		_, err := a.Spawn(ctxFor(t, 5*time.Second), h, paddock.NewCmd("scripted"), paddock.SpawnOpts{})
		requireKind(t, err, paddock.ErrStartTimeout)
	})
}

// The exec deadline covers a command that never ends.
func TestExecTimeout(t *testing.T) {
	t.Parallel()
	_, a, h := onBox(t)
	start := time.Now()
	_, err := a.Exec(ctxFor(t, 10*time.Minute), h, paddock.NewCmd("sleep", "600"), paddock.ExecOpts{Timeout: ms(300)})
	requireKind(t, err, paddock.ErrExecTimeout)
	require.Less(t, time.Since(start), 5*time.Minute, "the deadline ended it, not the command's ten minutes")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = a.Exec(ctx, h, paddock.NewCmd("true"), paddock.ExecOpts{})
	require.Error(t, err)
}

// Restore restarts the environment: exec is refused (503) briefly
// again, and waited out.
func TestExecAfterRestoreWaitsOutTheRestart(t *testing.T) {
	t.Parallel()
	const route = "WS /v1/sprites/{name}/exec"
	srv := newServer(t, spritestest.WithColdStart(1))
	a := newAdapter(t, srv, withCheckpoints)
	h := create(t, a, "box")
	ctx := ctxFor(t, 20*time.Second)
	_, err := a.Exec(ctx, h, paddock.NewCmd("true"), paddock.ExecOpts{})
	require.NoError(t, err)
	require.Equal(t, 2, srv.Count(route))
	require.NoError(t, a.RestoreCheckpoint(ctx, h, "v0"))
	res, err := a.Exec(ctx, h, paddock.NewCmd("echo", "back"), paddock.ExecOpts{})
	require.NoError(t, err)
	require.Equal(t, "back\n", string(res.Stdout))
	require.Equal(t, 4, srv.Count(route), "one refusal after the restore, then the command")
}

// Config.Exec clamps an hour's request to its ceiling, visibly; invalid
// limits are refused by New, before anything is sent.
func TestExecLimits(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newAdapter(t, srv, func(c *sprites.Config) { c.Exec = paddock.ExecLimits{MaxTimeout: 2 * time.Second} })
	h := create(t, a, "box")
	ctx := ctxFor(t, 30*time.Second)
	_, err := a.Exec(ctx, h, paddock.NewCmd("sleep", "60"), paddock.ExecOpts{Timeout: paddock.Duration(time.Hour)})
	var et *paddock.ExecTimeoutError
	require.ErrorAs(t, err, &et)
	require.Equal(t, 2*time.Second, et.Timeout)
	res, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", "echo out; echo err >&2"), paddock.ExecOpts{})
	require.NoError(t, err)
	require.Equal(t, paddock.ExecResult{Stdout: []byte("out\n"), Stderr: []byte("err\n"), Timeout: paddock.Duration(2 * time.Second)}, res)

	before := len(srv.Requests())
	_, err = sprites.New(sprites.Config{Token: paddock.NewSecret(srv.Token()), BaseURL: srv.URL(), Exec: paddock.ExecLimits{MaxTimeout: -1}})
	require.ErrorIs(t, err, paddock.ErrInvalid)
	require.Len(t, srv.Requests(), before, "nothing was sent")
}

// trapped prints "ready", then "usr1" for each USR1, and keeps running.
var trapped = paddock.NewCmd("sh", "-c", `trap 'echo usr1' USR1; echo ready; while :; do sleep 0.05; done`)

// Signals reach the command's process group as Sprites' client sends them:
// over the socket when the upgrade lists the signal capability, otherwise
// through the kill endpoint with a zero timeout (which must not
// escalate). INT ends a shell with 130, TERM with 143, and a trapped USR1
// leaves it running with its output flowing.
func TestSignals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		caps    string
		viaHTTP bool
	}{{"over the socket", "signal", false}, {"through the kill endpoint", "", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, spritestest.WithCapabilities(c.caps))
			a := newAdapter(t, srv)
			h := create(t, a, "box")
			for _, end := range []struct {
				sig  paddock.Signal
				code int
			}{{paddock.SignalInt, 130}, {paddock.SignalTerm, 143}} {
				kills := srv.Count("POST /v1/sprites/{name}/exec/{session}/kill")
				st := spawn(t, a, h, trapped, paddock.SpawnOpts{})
				stdoutUntil(t, st, "ready")
				for range 2 {
					require.NoError(t, paddock.SignalCommand(ctxFor(t, 5*time.Second), a, st, paddock.SignalUsr1))
					adaptertest.StdoutUntil(t, st, "usr1", 5*time.Second)
				}
				require.NoError(t, paddock.SignalCommand(ctxFor(t, 5*time.Second), a, st, end.sig))
				_, _, last := drain(t, st)
				require.Equal(t, paddock.Exit(end.code), last)
				requireKind(t, paddock.SignalCommand(ctxFor(t, time.Second), a, st, paddock.SignalTerm), paddock.ErrCommandExited)

				sent := srv.Count("POST /v1/sprites/{name}/exec/{session}/kill") - kills
				if !c.viaHTTP {
					require.Zero(t, sent, "signals travel on the socket")
					continue
				}
				require.Equal(t, 3, sent, "each signal is one kill request")
				var last3 []url.Values
				for _, r := range srv.Requests() {
					if r.Route == "POST /v1/sprites/{name}/exec/{session}/kill" {
						q, err := url.ParseQuery(r.Query)
						require.NoError(t, err)
						last3 = append(last3, q)
					}
				}
				last3 = last3[len(last3)-3:]
				for i, want := range []string{"USR1", "USR1", string(end.sig)} {
					require.Equal(t, want, last3[i].Get("signal"), "the bare name, as Sprites' client sends it")
					require.Equal(t, "0s", last3[i].Get("timeout"))
				}
			}
		})
	}
}

// A signal whose kill request finds the session gone (404, or 410 as
// Sprites' client expects) is command_exited; a terminate answered 410 is
// done in graceful mode and unconfirmed in force mode, as 404 is.
func TestAGoneSessionIsNotAnError(t *testing.T) {
	t.Parallel()
	srv := newServer(t, spritestest.WithCapabilities(""))
	a := newAdapter(t, srv)
	h := create(t, a, "box")
	st := spawn(t, a, h, trapped, paddock.SpawnOpts{})
	stdoutUntil(t, st, "ready")
	const kill = "POST /v1/sprites/{name}/exec/{session}/kill"
	for _, status := range []int{http.StatusNotFound, http.StatusGone} {
		srv.Fail(kill, spritestest.Fault{Status: status, Body: `{"error":"session not found"}`})
		requireKind(t, paddock.SignalCommand(ctxFor(t, 5*time.Second), a, st, paddock.SignalInt), paddock.ErrCommandExited)
		srv.Fail(kill, spritestest.Fault{Status: status, Body: `{"error":"session not found"}`})
		require.NoError(t, a.TerminateSession(ctxFor(t, 5*time.Second), h, st.SessionID(), paddock.TerminateOpts{}))
		srv.Fail(kill, spritestest.Fault{Status: status, Body: `{"error":"session not found"}`})
		requireKind(t, a.TerminateSession(ctxFor(t, 5*time.Second), h, st.SessionID(), paddock.TerminateOpts{Mode: paddock.TerminateForce}),
			paddock.ErrTerminationUnconfirmed)
	}
	srv.Fail(kill, spritestest.Fault{Status: http.StatusUnauthorized})
	requireKind(t, paddock.SignalCommand(ctxFor(t, 5*time.Second), a, st, paddock.SignalInt), paddock.ErrDenied)
	require.NoError(t, paddock.SignalCommand(ctxFor(t, 5*time.Second), a, st, paddock.SignalInt))
	_, _, last := drain(t, st)
	require.Equal(t, paddock.Exit(130), last, "the faults sent nothing: the first real INT ends it")
}

// A TTY spawn starts at the size asked for (rows and cols on the exec) or
// 80x24, and a resize message reaches the terminal: stty size changes.
func TestTerminalSize(t *testing.T) {
	t.Parallel()
	srv, a, h := onBox(t)
	sizeLoop := paddock.NewCmd("sh", "-c", `stty size; while read line; do stty size; done`)

	st := spawn(t, a, h, sizeLoop, paddock.SpawnOpts{TTY: true, Stdin: true, Size: &paddock.TermSize{Cols: 120, Rows: 40}})
	stdoutUntil(t, st, "40 120")
	require.NoError(t, paddock.ResizeTerminal(ctxFor(t, 5*time.Second), a, st, paddock.TermSize{Cols: 100, Rows: 30}))
	require.NoError(t, st.WriteStdin(ctxFor(t, 5*time.Second), []byte("size\n")))
	stdoutUntil(t, st, "30 100")
	require.NoError(t, st.CloseStdin(ctxFor(t, 5*time.Second)))
	_, _, last := drain(t, st)
	require.Equal(t, paddock.Exit(0), last)

	st = spawn(t, a, h, sizeLoop, paddock.SpawnOpts{TTY: true, Stdin: true})
	stdoutUntil(t, st, "24 80")
	require.NoError(t, st.CloseStdin(ctxFor(t, 5*time.Second)))
	drain(t, st)

	var queries []url.Values
	for _, r := range srv.Requests() {
		if r.Route == "WS /v1/sprites/{name}/exec" {
			q, err := url.ParseQuery(r.Query)
			require.NoError(t, err)
			queries = append(queries, q)
		}
	}
	require.Len(t, queries, 2)
	require.Equal(t, []string{"40", "120"}, []string{queries[0].Get("rows"), queries[0].Get("cols")})
	require.Equal(t, []string{"24", "80"}, []string{queries[1].Get("rows"), queries[1].Get("cols")})

	plain := spawn(t, a, h, trapped, paddock.SpawnOpts{})
	stdoutUntil(t, plain, "ready")
	requireKind(t, paddock.ResizeTerminal(ctxFor(t, 5*time.Second), a, plain, paddock.TermSize{Cols: 80, Rows: 24}), paddock.ErrInvalid,
		"a command without a terminal")
}
