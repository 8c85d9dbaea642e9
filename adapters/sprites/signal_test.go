package sprites_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
	"github.com/stretchr/testify/require"
)

// stdoutPast reads until stdout holds want, passing over stderr (a shell
// reports its child's death by USR1 there).
func stdoutPast(t testing.TB, st paddock.Stream, want string) {
	t.Helper()
	var got string
	ctx := ctxFor(t, 5*time.Second)
	for !strings.Contains(got, want) {
		ev, err := st.Next(ctx)
		require.NoError(t, err, "waiting for %q, got %q", want, got)
		require.Contains(t, []paddock.EventKind{paddock.EventStdout, paddock.EventStderr}, ev.Kind, "waiting for %q, got %v", want, ev)
		if ev.Kind == paddock.EventStdout {
			got += string(ev.Data)
		}
	}
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
					stdoutPast(t, st, "usr1")
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
	srv := newServer(t)
	a := newAdapter(t, srv)
	h := create(t, a, "box")
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
