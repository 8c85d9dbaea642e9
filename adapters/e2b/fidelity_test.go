package e2b_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/adapters/internal/fidelity"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests in this file are the adapter's side of adapters/e2b/FIDELITY.md:
// the failure injections and live behaviours E2B is known for, each
// against e2btest.

// closedURL is a loopback address nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

// A refused connection on any control-plane or envd call is unavailable.
func TestRefusedConnectionsAreUnavailable(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	live := newAdapter(t, srv)
	h, err := live.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	noControl := newAdapter(t, srv, func(c *e2b.Config) { c.BaseURL = closedURL(t) })
	noEnvd := newAdapter(t, srv, func(c *e2b.Config) { c.EnvdURL = closedURL(t) })
	calls := map[string]func() error{
		"create":  func() error { _, err := noControl.Create(ctx, "other", paddock.CreateOpts{}); return err },
		"get":     func() error { _, err := noControl.Get(ctx, h); return err },
		"list":    func() error { _, err := noControl.ListAllNames(ctx); return err },
		"suspend": func() error { return noControl.Suspend(ctx, h) },
		"resume":  func() error { _, err := noControl.Resume(ctx, h); return err },
		"policy":  func() error { return noControl.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{}) },
		"destroy": func() error { return noControl.Destroy(ctx, h) },
		"exec": func() error {
			_, err := noEnvd.Exec(ctx, h, paddock.NewCmd("true"), paddock.ExecOpts{})
			return err
		},
		"spawn": func() error {
			_, err := noEnvd.Spawn(ctx, h, paddock.NewCmd("true"), paddock.SpawnOpts{})
			return err
		},
		"write file": func() error {
			return noEnvd.WriteFile(ctx, h, "/tmp/f", 0o644, strings.NewReader("x"))
		},
		"read file": func() error { _, err := noEnvd.ReadFile(ctx, h, "/tmp/f"); return err },
		"sessions":  func() error { _, err := noEnvd.ListSessions(ctx, h); return err },
		"attach": func() error {
			_, err := noEnvd.Attach(ctx, h, "paddock-0123456789abcdef", paddock.AttachOpts{})
			return err
		},
	}
	for name, call := range calls {
		err := call()
		captured.Err(err)
		assert.ErrorIs(t, err, paddock.ErrUnavailable, name)
	}
}

// More control-plane answers: other 4xx are invalid, 599 unavailable; a
// create answering sandboxId (not sandboxID) is understood; listing
// entries that are not ours are skipped; a failing resume surfaces.
func TestMoreControlPlaneAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		kind   error
	}{{400, paddock.ErrInvalid}, {422, paddock.ErrInvalid}, {599, paddock.ErrUnavailable}} {
		srv := e2btest.NewServer(t)
		a := newAdapter(t, srv)
		srv.Fail("POST /sandboxes", e2btest.Status(tc.status))
		_, err := a.Create(ctx, "box", paddock.CreateOpts{})
		captured.Err(err)
		require.ErrorIs(t, err, tc.kind, "%d", tc.status)
		assert.Contains(t, err.Error(), fmt.Sprint(tc.status))
	}

	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	srv.Fail("POST /sandboxes", e2btest.Body(http.StatusCreated, `{"sandboxId":"iold","templateID":"base"}`))
	_, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err, "an older create answer's sandboxId")

	srv.Fail("GET /v2/sandboxes", e2btest.Body(http.StatusOK,
		`[{"sandboxID":"ia","state":"running","metadata":{"other":"x"}},{"sandboxID":"ib","state":"running","metadata":{"paddock_name":"mine","paddock":"1"}}]`))
	names, err := a.ListAllNames(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"mine"}, names, "an entry without our name is not ours")

	h, err := a.Create(ctx, "real", paddock.CreateOpts{})
	require.NoError(t, err)
	require.NoError(t, a.Suspend(ctx, h))
	srv.Fail("POST /sandboxes/{id}/connect", e2btest.Body(418, `{"code":418,"message":"transitioning"}`))
	_, err = a.Exec(ctx, h, paddock.NewCmd("true"), paddock.ExecOpts{})
	captured.Err(err)
	require.ErrorIs(t, err, paddock.ErrInvalid, "a resume that fails is the call's error")
}

// The adapter selects processes by pid only (envd's tag lookup can miss a
// live process): no SendInput, CloseStdin, SendSignal or Connect names a
// tag, and an attach's stdin reaches the original process.
func TestProcessesAreSelectedByPidOnly(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", "echo ready; read x; echo got:$x"), paddock.SpawnOpts{Stdin: true, Detachable: true})
	require.NoError(t, err)
	readUntil(t, st, "ready\n")
	require.NoError(t, st.Close(), "detach")
	require.ErrorIs(t, st.WriteStdin(ctx, []byte("x")), paddock.ErrCommandExited, "a closed stream takes no stdin")

	watcher, err := a.Attach(ctx, h, st.SessionID(), paddock.AttachOpts{})
	require.NoError(t, err)
	require.ErrorIs(t, watcher.WriteStdin(ctx, []byte("no\n")), paddock.ErrWriteFailed, "an attach without stdin writes nothing")
	require.NoError(t, watcher.Close())
	at, err := a.Attach(ctx, h, st.SessionID(), paddock.AttachOpts{Stdin: true})
	require.NoError(t, err)
	defer at.Close()
	require.NoError(t, at.WriteStdin(ctx, []byte("yes\n")))
	got, err := adaptertest.Summary(t, at, 30*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "ready\ngot:yes\n||0", got, "replayed from byte zero, then followed; stdin reached the original")

	tagged := 0
	for _, r := range srv.Requests() {
		switch r.Route {
		case inputRoute, "ENVD /process.Process/CloseStdin", "ENVD /process.Process/SendSignal", "ENVD /process.Process/Connect":
			assert.NotContains(t, r.Body, `"tag"`, "%s selects by pid", r.Route)
			assert.Contains(t, r.Body, `"pid"`)
			tagged++
		}
	}
	assert.Positive(t, tagged)
}

// A detachable spawn starts /bin/sh -c with the journal script, tagged
// with its session id; the argv goes through exactly.
func TestDetachableStartBody(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	plain, err := a.Spawn(ctx, h, paddock.NewCmd("sleep", "30"), paddock.SpawnOpts{})
	require.NoError(t, err)
	defer plain.Close()
	st, err := a.Spawn(ctx, h, paddock.NewCmd("printf", "%s|", "a'b", "$HOME", "two words"), paddock.SpawnOpts{Detachable: true})
	require.NoError(t, err)
	defer st.Close()
	got, err := adaptertest.Summary(t, st, 30*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "a'b|$HOME|two words|||0", got)
	sessions, err := a.ListSessions(ctx, h)
	require.NoError(t, err)
	require.Len(t, sessions, 1, "a process that is not a session is not listed")
	assert.Equal(t, st.SessionID(), sessions[0].ID)
	assert.Contains(t, sessions[0].Command, "printf")
	var start struct {
		Process struct {
			Cmd  string   `json:"cmd"`
			Args []string `json:"args"`
		} `json:"process"`
		Tag string `json:"tag"`
	}
	for _, r := range srv.Requests() {
		if r.Route == startRoute {
			require.NoError(t, json.Unmarshal([]byte(r.Body[5:]), &start))
			assert.Equal(t, srv.Sandboxes()[0], r.Header.Get("E2b-Sandbox-Id"), "envd calls always carry the routing headers")
			assert.Equal(t, "49983", r.Header.Get("E2b-Sandbox-Port"))
			assert.Empty(t, r.Header.Get("Connect-Timeout-Ms"), "a process stream has no deadline on envd")
			assert.Equal(t, "50", r.Header.Get("Keepalive-Ping-Interval"))
		}
	}
	assert.Equal(t, "/bin/sh", start.Process.Cmd)
	require.NotEmpty(t, start.Process.Args)
	assert.Equal(t, "-c", start.Process.Args[0])
	assert.Equal(t, st.SessionID(), start.Tag)
}

// Files: the upload's query names a staging file beside the path and the
// configured user; a sandbox that is not there is not_found; the owner is
// that user.
func TestWriteFileQuery(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv, func(c *e2b.Config) { c.User = "root" })
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	require.NoError(t, a.WriteFile(ctx, h, "/work/file.txt", 0o644, strings.NewReader("x")))
	var query string
	for _, r := range srv.Requests() {
		if r.Route == filesRoute {
			query = r.Query
		}
	}
	q, err := url.ParseQuery(query)
	require.NoError(t, err)
	assert.True(t, paddock.IsStagingPath(q.Get("path")), "the upload goes to a staging file: %s", q.Get("path"))
	assert.Equal(t, "/work", path.Dir(q.Get("path")), "beside the path, then moved over it")
	assert.Equal(t, "root", q.Get("username"))
	assert.Equal(t, "root", srv.Owner(srv.Sandboxes()[0], "/work/file.txt"))
	entries, err := paddock.ListDir(ctx, a, h, "/work")
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "file.txt", entries[0].Name, "no staging file is left")
	require.ErrorIs(t, a.WriteFile(ctx, a.BuildHandle("absent"), "/tmp/f", 0o644, strings.NewReader("x")), paddock.ErrNotFound)
}

// What E2B does around a pause, as its live tests saw it: exec on a
// paused sandbox resumes it first; the disk and the processes survive; a
// process started before the pause is listed after it, its attach replays
// the output from before the pause and its stdin still works; a new
// process takes stdin and exits 0 on EOF; a finite exec timeout holds
// against sleep.
func TestAroundAPause(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	id := srv.Sandboxes()[0]
	require.NoError(t, a.WriteFile(ctx, h, "/home/user/kept.txt", 0o644, strings.NewReader("before the pause")))
	st, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", "echo ready; echo before-pause; read x; echo after:$x"),
		paddock.SpawnOpts{Stdin: true, Detachable: true})
	require.NoError(t, err)
	readUntil(t, st, "ready\nbefore-pause\n")
	require.NoError(t, st.Close())

	require.NoError(t, a.Suspend(ctx, h))
	require.Equal(t, "paused", srv.State(id))
	res, err := a.Exec(ctx, h, paddock.NewCmd("cat", "/home/user/kept.txt"), paddock.ExecOpts{})
	require.NoError(t, err, "exec on a paused sandbox resumes it first")
	assert.Equal(t, "before the pause", string(res.Stdout), "the disk survives")
	info, err := a.Get(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, paddock.StatusRunning, info.Status)

	sessions, err := a.ListSessions(ctx, h)
	require.NoError(t, err)
	require.Len(t, sessions, 1, "the process from before the pause is listed")
	assert.Equal(t, st.SessionID(), sessions[0].ID)
	at, err := a.Attach(ctx, h, st.SessionID(), paddock.AttachOpts{Stdin: true})
	require.NoError(t, err)
	require.NoError(t, at.WriteStdin(ctx, []byte("resumed\n")))
	got, err := adaptertest.Summary(t, at, 30*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "ready\nbefore-pause\nafter:resumed\n||0", got)
	require.NoError(t, at.Close())

	cat, err := a.Spawn(ctx, h, paddock.NewCmd("cat"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	require.NoError(t, cat.WriteStdin(ctx, []byte("new")))
	require.NoError(t, cat.CloseStdin(ctx))
	got, err = adaptertest.Summary(t, cat, 30*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "new||0", got, "a new process after the resume takes stdin and exits 0 on EOF")
	require.NoError(t, cat.Close())

	began := time.Now()
	_, err = a.Exec(ctx, h, paddock.NewCmd("sleep", "600"), paddock.ExecOpts{Timeout: paddock.Duration(500 * time.Millisecond)})
	require.ErrorIs(t, err, paddock.ErrExecTimeout)
	assert.Less(t, time.Since(began), 5*time.Minute, "the deadline ended it, not the command's ten minutes")
}

// Egress: the policy the adapter applies decides what the sandbox reaches
// (e2btest's stand-in for a request out).
func TestEgressFollowsTheAppliedPolicy(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	id := srv.Sandboxes()[0]
	require.NoError(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{"example.com"}}))
	assert.True(t, srv.Egress(id, "example.com"))
	assert.False(t, srv.Egress(id, "other.test"))
	require.NoError(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{}}))
	assert.False(t, srv.Egress(id, "example.com"), "an empty allow list cuts everything")
}

// readUntil reads a stream's stdout until it is exactly want (chunks
// follow the pipe's reads, not lines).
func readUntil(t *testing.T, st paddock.Stream, want string) {
	t.Helper()
	var out string
	for len(out) < len(want) {
		ev, err := st.Next(ctxFor(t, 30*time.Second))
		require.NoError(t, err)
		require.Equal(t, paddock.EventStdout, ev.Kind, "%v", ev.Err)
		out += string(ev.Data)
	}
	require.Equal(t, want, out)
}

// Every test FIDELITY.md names exists, in this package, e2btest, or the
// runtime's.
func TestFidelityTableNamesRealTests(t *testing.T) {
	t.Parallel()
	fidelity.RequireNamedTestsExist(t, "FIDELITY.md", 40, "*_test.go", "e2btest/*_test.go", "../../actors/*_test.go", "../internal/stubfs/*_test.go")
}
