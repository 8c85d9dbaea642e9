package daytona_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/daytona"
	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/adapters/internal/fidelity"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sandbox answer without a toolbox proxy URL: the adapter asks the
// control plane for it.
func TestToolboxURLFallback(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	srv.Fail(getRoute, daytonatest.Body(http.StatusOK, `{"id":"`+srv.ID("box")+`","name":"box","state":"started"}`))
	res, err := a.Exec(ctx, h, paddock.NewCmd("echo", "ok"), paddock.ExecOpts{})
	require.NoError(t, err)
	assert.Equal(t, "ok\n", string(res.Stdout))
	assert.Equal(t, 1, srv.Count("GET /api/sandbox/{idOrName}/toolbox-proxy-url"))
}

// The daemon forgets its sessions when the sandbox stops: a session from
// before a suspend is not found after the resume.
func TestSessionsDoNotSurviveAStop(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t, fastFollow())
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	st, err := a.Spawn(ctx, h, paddock.NewCmd("sleep", "30"), paddock.SpawnOpts{Detachable: true})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	sessions, err := a.ListSessions(ctx, h)
	require.NoError(t, err)
	require.Len(t, sessions, 1)
	assert.Equal(t, "sleep 30", sessions[0].Command)
	require.NoError(t, a.Suspend(ctx, h))
	_, err = a.Resume(ctx, h)
	require.NoError(t, err)
	_, err = a.Attach(ctx, h, st.SessionID(), paddock.AttachOpts{})
	require.ErrorIs(t, err, paddock.ErrNotFound)
	sessions, err = a.ListSessions(ctx, h)
	require.NoError(t, err)
	assert.Empty(t, sessions)
}

// Journal bytes before the first marker are dropped (as Daytona's own
// demuxers drop them); a line after a marker that the wrapper did not
// write is the provider's error, never silently lost output.
func TestJournalsTheWrapperDidNotWrite(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t, fastFollow())
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)

	st, err := a.Spawn(ctx, h, paddock.NewCmd("sleep", "0.5"), paddock.SpawnOpts{Detachable: true})
	require.NoError(t, err)
	require.True(t, srv.AppendJournal("box", st.SessionID(), []byte("a log with no markers\n")))
	got, err := adaptertest.Summary(t, st, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, "||0", got, "unmarked bytes are no stream's")
	require.NoError(t, st.Close())

	st, err = a.Spawn(ctx, h, paddock.NewCmd("sleep", "0.5"), paddock.SpawnOpts{Detachable: true})
	require.NoError(t, err)
	require.True(t, srv.AppendJournal("box", st.SessionID(), []byte("\x01\x01\x01not base64!\n")))
	_, err = adaptertest.Summary(t, st, time.Minute)
	require.ErrorIs(t, err, paddock.ErrProvider)
	require.NoError(t, st.Close())
}

// Commands of one session run one after another (the daemon's session
// shell), which is why every spawn gets a session of its own: two spawns
// at once both run at once.
func TestSpawnsRunAtOnce(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t, fastFollow())
	a := newAdapter(t, srv, func(c *daytona.Config) { c.Timeout = 30 * time.Second })
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	first, err := a.Spawn(ctx, h, paddock.NewCmd("sh", "-c", "read x; echo first:$x"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	defer first.Close()
	second, err := a.Spawn(ctx, h, paddock.NewCmd("echo", "second"), paddock.SpawnOpts{})
	require.NoError(t, err)
	got, err := adaptertest.Summary(t, second, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, "second\n||0", got, "the second ran while the first waited for input")
	require.NoError(t, second.Close())
	require.NoError(t, first.WriteStdin(ctx, []byte("go\n")))
	require.NoError(t, first.CloseStdin(ctx))
	got, err = adaptertest.Summary(t, first, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, "first:go\n||0", got)
}

// Session listings as older or other daemons give them: sessions of
// other owners are not ours, one without commands lists with no command,
// a legacy cmdId key is read; a bare-array sandbox listing is one final
// page.
func TestListingShapes(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t, fastFollow())
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	const sessions = "TOOLBOX GET /process/session"
	srv.Fail(sessions, daytonatest.Body(http.StatusOK, `[{"sessionId":"someone-else","commands":[]},`+
		`{"sessionId":"paddock-0123456789abcdef","commands":[]},`+
		`{"sessionId":"paddock-fedcba9876543210","commands":[{"cmdId":"c1","command":"# paddock: echo hi\nrest"}]},`+
		`{"sessionId":"paddock-1111111111111111","commands":[{"id":"c2","command":"# paddock: false","exitCode":1}]},`+
		`{"sessionId":"paddock-2222222222222222","commands":[{"id":"c3","command":"# paddock: lost","exitCode":125}]},`+
		`{"sessionId":"paddock-3333333333333333","commands":[{"id":"c4","command":"# paddock: exit 125","exitCode":125}]}]`))
	// The wrapper's 125 is the command's own code unless its journal holds
	// the wrapper's unknownExitLine, whatever the stream written before it.
	// (the listing reads the journals of the two in its order).
	const logs = "TOOLBOX GET /process/session/{session}/command/{command}/logs"
	srv.Fail(logs, daytonatest.Body(http.StatusOK, "\x02\x02\x02aGk=\n\x01\x01\x01aGk=\n!\n")) // marked only where the stream changes
	srv.Fail(logs, daytonatest.Body(http.StatusOK, "\x01\x01\x01aGk=\n\x02\x02\x02IQ==\n"))
	got, err := a.ListSessions(ctx, h)
	require.NoError(t, err)
	one, lost := 1, 125
	assert.Equal(t, []paddock.Session{
		{ID: "paddock-0123456789abcdef"},
		{ID: "paddock-fedcba9876543210", Command: "echo hi", State: paddock.SessionRunning},
		{ID: "paddock-1111111111111111", Command: "false", State: paddock.SessionExited, ExitCode: &one},
		{ID: "paddock-2222222222222222", Command: "lost", State: paddock.SessionFailed, Failure: paddock.ErrClosedBeforeExit.Error()},
		{ID: "paddock-3333333333333333", Command: "exit 125", State: paddock.SessionExited, ExitCode: &lost},
	}, got)
	srv.Fail(sessions, daytonatest.Body(http.StatusOK, `{"sessions":[{"sessionId":"paddock-0123456789abcdef","commands":[]}]}`))
	got, err = a.ListSessions(ctx, h)
	require.NoError(t, err)
	assert.Len(t, got, 1, "a wrapped listing")
	srv.Fail(sessions, daytonatest.Body(418, `{"message":"teapot"}`))
	_, err = a.ListSessions(ctx, h)
	require.ErrorIs(t, err, paddock.ErrInvalid)

	srv.Fail("TOOLBOX GET /process/session/{session}", daytonatest.Body(http.StatusOK, `{"sessionId":"paddock-0123456789abcdef","commands":[]}`))
	_, err = a.Attach(ctx, h, "paddock-0123456789abcdef", paddock.AttachOpts{})
	require.ErrorIs(t, err, paddock.ErrNotFound, "a session without a command")
	_, err = a.Attach(ctx, h, "someone-else", paddock.AttachOpts{})
	require.ErrorIs(t, err, paddock.ErrNotFound, "not ours")

	srv.Fail(listRoute, daytonatest.Body(http.StatusOK, `[{"name":"legacy"},{"id":"x"}]`))
	names, err := a.ListAllNames(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"legacy"}, names)
}

// Every test FIDELITY.md names exists, in this package or daytonatest.
func TestFidelityTableNamesRealTests(t *testing.T) {
	t.Parallel()
	fidelity.RequireNamedTestsExist(t, "FIDELITY.md", 30, "*_test.go", "daytonatest/*_test.go", "../internal/stubfs/*_test.go")
}
