package daytona_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/daytona"
	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// Toolbox routes as daytonatest records them.
const (
	executeRoute = "TOOLBOX POST /process/execute"
	sessionRoute = "TOOLBOX POST /process/session"
	execRoute    = "TOOLBOX POST /process/session/{session}/exec"
	commandRoute = "TOOLBOX GET /process/session/{session}/command/{command}"
	inputRoute   = "TOOLBOX POST /process/session/{session}/command/{command}/input"
	logsRoute    = "TOOLBOX GET /process/session/{session}/command/{command}/logs"
	uploadRoute  = "TOOLBOX POST /files/upload"
	downRoute    = "TOOLBOX GET /files/download"
)

// faultCase is one injected fault: what to prepare, the faults queued per
// route, the call, what it must answer, and how many requests each route
// must have seen (a create or an exec is never silently repeated).
type faultCase struct {
	setup  func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server)
	faults map[string][]daytonatest.Fault
	call   func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server) (string, error)
	want   string // the answer when there is no error
	kind   error
	detail string
	sends  map[string]int
}

func errBody(status int, msg string) daytonatest.Fault {
	return daytonatest.Body(status, fmt.Sprintf(`{"statusCode":%d,"message":%q}`, status, msg))
}

var itoa = strconv.Itoa

// Every fault maps to its exact kind; a 409 mid-transition and a stop of
// a stopped sandbox are waited out or taken as done; a follow that closes
// with no exit code recorded is closed_before_exit, never exit 0. Rows run
// one at a time so each proves it leaves no goroutine behind.
func TestFaults(t *testing.T) {
	one := func(route string, f ...daytonatest.Fault) map[string][]daytonatest.Fault {
		return map[string][]daytonatest.Fault{route: f}
	}
	created := func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) {
		_, err := a.Create(ctx, "box", paddock.CreateOpts{})
		require.NoError(t, err)
	}
	stopped := func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server) {
		created(t, a, srv)
		require.NoError(t, a.Suspend(ctx, a.BuildHandle("box")))
	}
	box := func(a *daytona.Adapter) paddock.Handle { return a.BuildHandle("box") }
	create := func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
		_, err := a.Create(ctx, "box", paddock.CreateOpts{})
		return "created", err
	}
	get := func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
		info, err := a.Get(ctx, box(a))
		return string(info.Status), err
	}
	resume := func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
		_, err := a.Resume(ctx, box(a))
		return "resumed", err
	}
	suspend := func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
		return "suspended", a.Suspend(ctx, box(a))
	}
	exec := func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
		res, err := a.Exec(ctx, box(a), paddock.NewCmd("sh", "-c", "printf out; exit 2"), paddock.ExecOpts{})
		return string(res.Stdout) + " " + itoa(res.ExitCode), err
	}
	spawn := func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
		st, err := a.Spawn(ctx, box(a), paddock.NewCmd("sh", "-c", "printf out; printf err >&2; exit 3"), paddock.SpawnOpts{})
		if err != nil {
			return "", err
		}
		defer st.Close()
		return readStream(t, st)
	}
	tests := map[string]faultCase{
		"429 with a hint": {faults: one(createRoute, daytonatest.RateLimited(7)), call: create, kind: paddock.ErrRateLimited, detail: "7s",
			sends: map[string]int{createRoute: 1}},
		"429 without a hint": {faults: one(createRoute, daytonatest.RateLimited(-1)), call: create, kind: paddock.ErrRateLimited,
			sends: map[string]int{createRoute: 1}},
		"401": {setup: created, faults: one(getRoute, daytonatest.Status(401)), call: get, kind: paddock.ErrDenied, detail: "401"},
		"403 on create": {faults: one(createRoute, daytonatest.Status(403)), call: create, kind: paddock.ErrDenied,
			sends: map[string]int{createRoute: 1}},
		"404 mid-create": {faults: one(getRoute, daytonatest.Status(404)), call: create, kind: paddock.ErrNotFound,
			sends: map[string]int{createRoute: 1}},
		"409 on create adopts": {setup: created, faults: one(createRoute, errBody(409, "Sandbox with name box already exists")),
			call: create, want: "created", sends: map[string]int{createRoute: 1}},
		"409 on start is waited out": {setup: stopped, faults: one(startRoute, errBody(409, "Sandbox state change in progress")),
			call: resume, want: "resumed", sends: map[string]int{startRoute: 2}},
		"400 on stop of a stopped sandbox": {setup: func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server) {
			created(t, a, srv)
			srv.SetState("box", "stopped", "")
			srv.Fail(getRoute, daytonatest.Body(200, `{"id":"`+srv.ID("box")+`","name":"box","state":"started"}`))
		}, call: suspend, want: "suspended", sends: map[string]int{stopRoute: 1}},
		"500 on create": {faults: one(createRoute, daytonatest.Status(500)), call: create, kind: paddock.ErrUnavailable, detail: "500",
			sends: map[string]int{createRoute: 1}},
		"503 on get": {setup: created, faults: one(getRoute, daytonatest.Status(503)), call: get, kind: paddock.ErrUnavailable},
		"502 on list": {faults: one(listRoute, daytonatest.Status(502)), kind: paddock.ErrUnavailable,
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				_, err := a.ListAllNames(ctx)
				return "", err
			}},
		"500 on delete": {setup: created, faults: one(deleteRoute, daytonatest.Status(500)), kind: paddock.ErrUnavailable,
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				return "", a.Destroy(ctx, box(a))
			}},
		"503 on start": {setup: stopped, faults: one(startRoute, daytonatest.Status(503)), call: resume, kind: paddock.ErrUnavailable},
		"500 on stop":  {setup: created, faults: one(stopRoute, daytonatest.Status(500)), call: suspend, kind: paddock.ErrUnavailable},
		"504 on network": {setup: created, faults: one(networkRoute, daytonatest.Status(504)), kind: paddock.ErrUnavailable,
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				return "", a.ApplyNetworkPolicy(ctx, box(a), paddock.NetworkPolicy{})
			}},
		"500 on execute": {setup: created, faults: one(executeRoute, daytonatest.Status(500)), call: exec, kind: paddock.ErrUnavailable,
			sends: map[string]int{executeRoute: 1}},
		"408 from execute is the exec timeout": {setup: created, faults: one(executeRoute, errBody(408, "request timeout: command execution timeout")),
			call: exec, kind: paddock.ErrExecTimeout},
		"500 on session create": {setup: created, faults: one(sessionRoute, daytonatest.Status(500)), call: spawn, kind: paddock.ErrUnavailable,
			sends: map[string]int{sessionRoute: 1, execRoute: 0}},
		"500 on session exec": {setup: created, faults: one(execRoute, daytonatest.Status(500)), call: spawn, kind: paddock.ErrUnavailable,
			sends: map[string]int{execRoute: 1}},
		"an async exec without a command id": {setup: created, faults: one(execRoute, daytonatest.Body(202, `{"unexpected":true}`)),
			call: spawn, kind: paddock.ErrProvider, sends: map[string]int{execRoute: 1}},
		"503 on the follow's handshake": {setup: created, faults: one(logsRoute, daytonatest.Status(503)), call: spawn, kind: paddock.ErrUnavailable},
		"500 on every exit-code read": {setup: created,
			faults: one(commandRoute, daytonatest.Status(500), daytonatest.Status(500), daytonatest.Status(500)),
			call:   spawn, kind: paddock.ErrClosedBeforeExit, sends: map[string]int{commandRoute: 3}},
		"a follow that closes before the exit, which never comes": {setup: func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server) {
			created(t, a, srv)
			srv.CutFollows(1)
			srv.WithholdExits(1)
		}, call: spawn, kind: paddock.ErrClosedBeforeExit},
		"a sandbox stuck starting past the deadline": {setup: func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server) {
			created(t, a, srv)
			srv.SetState("box", "starting", "")
		}, call: exec, kind: paddock.ErrUnavailable, detail: paddock.DetailTimeout, sends: map[string]int{executeRoute: 0}},
		"an errored sandbox": {setup: func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server) {
			created(t, a, srv)
			srv.SetState("box", "error", "disk failure")
		}, call: exec, kind: paddock.ErrProvider, detail: "disk failure"},
		"a failed build": {setup: func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server) {
			created(t, a, srv)
			srv.SetState("box", "build_failed", "no such image")
		}, call: resume, kind: paddock.ErrProvider, detail: "build_failed"},
		"500 on upload": {setup: created, faults: one(uploadRoute, daytonatest.Status(500)), kind: paddock.ErrUnavailable,
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				return "", a.WriteFile(ctx, box(a), "/tmp/f", 0o644, strings.NewReader("data"))
			}},
		"a reset mid-download": {setup: func(t *testing.T, a *daytona.Adapter, srv *daytonatest.Server) {
			created(t, a, srv)
			require.NoError(t, a.WriteFile(ctx, box(a), "/tmp/f", 0o644, strings.NewReader("0123456789")))
			srv.Fail(downRoute, daytonatest.Fault{Status: 200, Body: "01234", DeclaredLength: 10})
		}, kind: paddock.ErrUnavailable,
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				rc, err := a.ReadFile(ctx, box(a), "/tmp/f")
				if err != nil {
					return "", err
				}
				defer rc.Close()
				b, err := io.ReadAll(rc)
				if err != nil {
					return string(b), &paddock.UnavailableError{Detail: err.Error()} // the reader reports the cut
				}
				return string(b), nil
			}},
		"418 on create": {faults: one(createRoute, errBody(418, "teapot")), call: create, kind: paddock.ErrInvalid, detail: "418",
			sends: map[string]int{createRoute: 1}},
		"422 with a list body on start": {setup: stopped, faults: one(startRoute, daytonatest.Body(422, `["resume is not supported"]`)),
			call: resume, kind: paddock.ErrInvalid, detail: "422"},
		"599 with a text body on get": {setup: created, faults: one(getRoute, daytonatest.Body(599, "upstream gone")), call: get,
			kind: paddock.ErrUnavailable, detail: "599"},
		"404 in plain text on delete is absence": {setup: created, faults: one(deleteRoute, daytonatest.Body(404, "gone")), want: "deleted",
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				return "deleted", a.Destroy(ctx, box(a))
			}},
		"an upload answered 204": {setup: created, faults: one(uploadRoute, daytonatest.Body(204, "")), want: "written",
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				return "written", a.WriteFile(ctx, box(a), "/tmp/f", 0o644, strings.NewReader("data"))
			}},
		"418 on upload": {setup: created, faults: one(uploadRoute, errBody(418, "teapot")), kind: paddock.ErrInvalid,
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				return "", a.WriteFile(ctx, box(a), "/tmp/f", 0o644, strings.NewReader("data"))
			}},
		"a malformed sandbox": {setup: created, faults: one(getRoute, daytonatest.Body(200, `{"id":`)), call: get, kind: paddock.ErrProvider},
		"an oversize list": {faults: one(listRoute, daytonatest.Body(200, `{"items":[],"x":"`+strings.Repeat("x", 16<<20)+`"}`)),
			kind: paddock.ErrProvider, detail: "larger than",
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				_, err := a.ListAllNames(ctx)
				return "", err
			}},
		"a list page cut short": {faults: one(listRoute, daytonatest.Fault{Status: 200, Body: `{"items":[{"na`, DeclaredLength: 4096}),
			kind: paddock.ErrUnavailable,
			call: func(t *testing.T, a *daytona.Adapter, _ *daytonatest.Server) (string, error) {
				_, err := a.ListAllNames(ctx)
				return "", err
			}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			runFault(t, tc)
		})
	}
}

func runFault(t *testing.T, tc faultCase) {
	srv := daytonatest.NewServer(t, fastFollow())
	defer srv.Close()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	a := newAdapter(t, srv, func(c *daytona.Config) { c.Transport = tr; c.StartTimeout = 3 * time.Second })
	if tc.setup != nil {
		tc.setup(t, a, srv)
	}
	before := map[string]int{}
	for route := range tc.sends {
		before[route] = srv.Count(route)
	}
	for route, faults := range tc.faults {
		for _, f := range faults {
			srv.Fail(route, f)
		}
	}
	got, err := tc.call(t, a, srv)
	captured.Err(err)
	if tc.kind == nil {
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	} else {
		require.Error(t, err, "answered %q", got)
		require.ErrorIs(t, err, tc.kind)
		assert.Contains(t, err.Error(), tc.detail)
		assert.NotContains(t, err.Error(), srv.Key())
	}
	for route, n := range tc.sends {
		assert.Equal(t, n, srv.Count(route)-before[route], "requests to %s", route)
	}
}

// readStream summarises a stream: its output, then its exit; its error
// event is the error.
func readStream(t *testing.T, st paddock.Stream) (string, error) {
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
			return string(out) + "|" + string(errb) + "|" + itoa(ev.Code), nil
		case paddock.EventError:
			return string(out) + "|" + string(errb), ev.Err
		}
	}
}
