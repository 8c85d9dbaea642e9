package e2b_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// Envd routes as e2btest records them.
const (
	startRoute  = "ENVD /process.Process/Start"
	inputRoute  = "ENVD /process.Process/SendInput"
	listRoute   = "ENVD /process.Process/List"
	filesRoute  = "ENVD /files"
	lookupRoute = "GET /v2/sandboxes"
)

// Envelopes of a process stream, as envd writes them.
var (
	started = e2btest.Message(`{"event":{"start":{"pid":42}}}`)
	he      = e2btest.Message(`{"event":{"data":{"stdout":"aGU="}}}`) // "he"
	llo     = e2btest.Message(`{"event":{"data":{"stdout":"bGxv"}}}`) // "llo"
	dropped = e2btest.Message(`{"event":{"data":{"stderr":"ZHJvcHBlZA=="}}}`)
	exit3   = e2btest.Message(`{"event":{"end":{"exitCode":3,"exited":true,"status":"exit status 3"}}}`)
	exit0   = e2btest.Message(`{"event":{"end":{"exited":true,"status":"exit status 0"}}}`)
	late    = e2btest.Message(`{"event":{"data":{"stdout":"bGF0ZQ=="}}}`) // "late"
	clean   = e2btest.EndStream(`{}`)
)

// envdCase is one injected envd fault: the faults queued per route, the
// call that meets them, what it must answer, and how many requests each
// route must have seen (a start is never silently repeated).
type envdCase struct {
	faults map[string][]e2btest.Fault
	call   func(t *testing.T, a *e2b.Adapter, srv *e2btest.Server, h paddock.Handle) (string, error)
	want   string // the outcome's summary when there is no error
	kind   error  // the taxonomy kind, when it fails
	detail string // a part of the error's text
	sends  map[string]int
}

// Every envd fault maps to its exact kind: partial output is never
// answered as a result, a stream that ends without its end event is
// closed_before_exit (never exit 0), an answer envd would never give is
// the provider's error, and a stall ends at the caller's deadline. Rows
// run one at a time so each proves it leaves no goroutine behind.
func TestEnvdFaults(t *testing.T) {
	one := func(route string, f ...e2btest.Fault) map[string][]e2btest.Fault {
		return map[string][]e2btest.Fault{route: f}
	}
	startOnce := map[string]int{startRoute: 1}
	tests := map[string]envdCase{
		"a scripted stream: output split anyhow, stderr apart, exit 3": {
			faults: one(startRoute, e2btest.Stream(started, he, llo, dropped, exit3, clean)),
			call:   execute(0), want: `out="hello" err="dropped" code=3`, sends: startOnce},
		"an end-of-stream carrying an error after output": {
			faults: one(startRoute, e2btest.Stream(started, he, e2btest.EndStream(`{"error":{"code":"unavailable","message":"stream unavailable"}}`))),
			call:   execute(0), kind: paddock.ErrUnavailable, detail: "stream unavailable", sends: startOnce},
		"an end-of-stream whose error is not an object": {
			faults: one(startRoute, e2btest.Stream(started, he, e2btest.EndStream(`{"error":"stream unavailable"}`))),
			call:   execute(0), kind: paddock.ErrProvider, detail: "end stream", sends: startOnce},
		"a clean end-of-stream without an end event": {
			faults: one(startRoute, e2btest.Stream(started, he, llo, clean)),
			call:   execute(0), kind: paddock.ErrClosedBeforeExit, sends: startOnce},
		"a body that ends without an end-of-stream message": {
			faults: one(startRoute, e2btest.Stream(started, he)),
			call:   execute(0), kind: paddock.ErrClosedBeforeExit, sends: startOnce},
		"a connection reset mid-body": {
			faults: one(startRoute, e2btest.Cut(e2btest.Stream(started, he))),
			call:   spawnAndRead, kind: paddock.ErrClosedBeforeExit, sends: startOnce},
		"an envelope promising more than the body holds": {
			faults: one(startRoute, e2btest.Stream(started, e2btest.Envelope(0, 4096, `{"event":{"data":{"stdout":"aGU="}}}`))),
			call:   spawnAndRead, kind: paddock.ErrClosedBeforeExit, sends: startOnce},
		"an envelope promising less than its message": {
			faults: one(startRoute, e2btest.Stream(started, e2btest.Envelope(0, 10, `{"event":{"data":{"stdout":"aGU="}}}`), clean)),
			call:   spawnAndRead, kind: paddock.ErrProvider, sends: startOnce},
		"an envelope with flags the protocol lacks": {
			faults: one(startRoute, e2btest.Stream(started, e2btest.Envelope(0x40, 2, `{}`), clean)),
			call:   execute(0), kind: paddock.ErrProvider, detail: "corrupt", sends: startOnce},
		"an oversize message": {
			faults: one(startRoute, e2btest.Stream(started, e2btest.Envelope(0, e2b.MaxEnvdMessage+1, ""))),
			call:   execute(0), kind: paddock.ErrProvider, detail: "larger than", sends: startOnce},
		"a malformed message": {
			faults: one(startRoute, e2btest.Stream(started, e2btest.Message(`{"event":{"data":`), clean)),
			call:   execute(0), kind: paddock.ErrProvider, detail: "unmarshal", sends: startOnce},
		"stderr that is not base64 (refused, not silently dropped)": {
			faults: one(startRoute, e2btest.Stream(started, e2btest.Message(`{"event":{"data":{"stderr":"%%%"}}}`), exit0, clean)),
			call:   execute(0), kind: paddock.ErrProvider, sends: startOnce},
		"frames to pass over: no event, an unknown event, empty output, keepalive": {
			faults: one(startRoute, e2btest.Stream(started, e2btest.Message(`{}`), e2btest.Message(`{"event":{"mystery":{"x":1}}}`),
				e2btest.Message(`{"event":{"data":{"stdout":""}}}`), e2btest.Message(`{"event":{"keepalive":{}}}`), he, exit0, clean)),
			call: execute(0), want: `out="he" err="" code=0`, sends: startOnce},
		"output after the exit is not the command's": {
			faults: one(startRoute, e2btest.Stream(started, he, exit3, late, exit0, clean)),
			call:   spawnAndRead, want: `out="he" err="" exit=3`, sends: startOnce},
		"an end-of-stream before the start": {
			faults: one(startRoute, e2btest.Stream(clean)),
			call:   spawnAndRead, kind: paddock.ErrUnavailable, detail: "without a start", sends: startOnce},
		"a refused start (a missing directory)": {
			faults: one(startRoute, e2btest.Stream(e2btest.EndStream(`{"error":{"code":"invalid_argument","message":"cwd '/nope' does not exist"}}`))),
			call:   spawnAndRead, kind: paddock.ErrInvalid, detail: "does not exist", sends: startOnce},
		"a refused user": {
			faults: one(startRoute, e2btest.Stream(e2btest.EndStream(`{"error":{"code":"unauthenticated","message":"invalid username: 'ghost'"}}`))),
			call:   spawnAndRead, kind: paddock.ErrDenied, detail: "invalid username", sends: startOnce},
		"a paused sandbox's envd answers 502 from the proxy": {
			faults: one(startRoute, e2btest.Body(http.StatusBadGateway, `{"sandboxId":"x","message":"The sandbox was not found","code":502}`)),
			call:   execute(0), kind: paddock.ErrUnavailable, sends: startOnce},
		"a start that never answers, past the exec deadline": {
			faults: one(startRoute, e2btest.Fault{Delay: time.Minute}),
			call:   execute(2 * time.Second), kind: paddock.ErrExecTimeout, sends: startOnce}, // seconds: under load the lookup alone can take a while
		"a stream that goes silent, past the exec deadline": {
			faults: one(startRoute, e2btest.Silent(e2btest.Stream(started, he))),
			call:   execute(2 * time.Second), kind: paddock.ErrExecTimeout, sends: startOnce}, // seconds: under load the lookup alone can take a while
		"stdin to a process envd no longer knows": {
			faults: one(inputRoute, e2btest.Body(http.StatusNotFound, `{"code":"not_found","message":"process with pid 42 not found"}`)),
			call:   writeStdin, kind: paddock.ErrCommandExited, sends: map[string]int{startRoute: 1, inputRoute: 1}},
		"stdin envd refuses to write": {
			faults: one(inputRoute, e2btest.Body(http.StatusInternalServerError, `{"code":"internal","message":"error writing to stdin: file already closed"}`)),
			call:   writeStdin, kind: paddock.ErrWriteFailed, sends: map[string]int{startRoute: 1, inputRoute: 1}},
		"a process list that fails": {
			faults: one(listRoute, e2btest.Body(http.StatusServiceUnavailable, `{"code":"unavailable","message":"busy"}`)),
			call:   listSessions, kind: paddock.ErrUnavailable, sends: map[string]int{listRoute: 1}},
		"a read of a file that is absent": {
			call: readFile("/tmp/absent.txt"), kind: paddock.ErrNotFound, sends: map[string]int{filesRoute: 1}},
		"a read of a directory": {
			call: readFile("/tmp"), kind: paddock.ErrInvalid, sends: map[string]int{filesRoute: 1}},
		"a write to a full disk": {
			faults: one(filesRoute, e2btest.Body(http.StatusInsufficientStorage, `{"code":507,"message":"not enough disk space"}`)),
			call:   writeFile, kind: paddock.ErrUnavailable, sends: map[string]int{filesRoute: 1}},
		"a lookup whose body is not a list": {
			faults: one(lookupRoute, e2btest.Body(http.StatusOK, `{"sandboxes":[]}`)),
			call:   execute(0), kind: paddock.ErrProvider, sends: map[string]int{startRoute: 0}},
		"envelopes split anywhere, several in one write, a head of under five bytes": {
			faults: one(startRoute, e2btest.Split(started[:3], started[3:]+he[:7], he[7:]+llo+dropped[:2], dropped[2:4], dropped[4:]+exit3+clean)),
			call:   execute(0), want: `out="hello" err="dropped" code=3`, sends: startOnce},
		"a journal whose exit record says 17": {
			call: attachAfter("17\n"), want: `out="ran\n" err="" exit=17`},
		"a journal whose exit record says 9": {
			call: attachAfter("9\n"), want: `out="ran\n" err="" exit=9`},
		"a journal whose exit record is garbled": {
			call: attachAfter("bad\n"), kind: paddock.ErrProvider, detail: "exit record"},
		"a journal whose exit record is missing, its process gone": {
			call: attachAfter(""), kind: paddock.ErrClosedBeforeExit},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			runEnvdCase(t, tc)
		})
	}
}

// runEnvdCase runs one row on a server and transport of its own, both
// closed before the leak check.
func runEnvdCase(t *testing.T, tc envdCase) {
	srv := e2btest.NewServer(t)
	defer srv.Close()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	a := newAdapter(t, srv, func(c *e2b.Config) { c.Transport = tr })
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	before := map[string]int{}
	for route := range tc.sends {
		before[route] = srv.Count(route)
	}
	for route, faults := range tc.faults {
		for _, f := range faults {
			srv.Fail(route, f)
		}
	}
	got, err := tc.call(t, a, srv, h)
	captured.Err(err)
	if tc.kind == nil {
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	} else {
		require.Error(t, err, "answered %s", got)
		require.ErrorIs(t, err, tc.kind)
		assert.Contains(t, err.Error(), tc.detail)
		assert.NotContains(t, err.Error(), srv.Key())
	}
	for route, n := range tc.sends {
		assert.Equal(t, n, srv.Count(route)-before[route], "requests to %s", route)
	}
}

// execute runs a command to completion, with a timeout when one is given.
func execute(timeout time.Duration) func(*testing.T, *e2b.Adapter, *e2btest.Server, paddock.Handle) (string, error) {
	return func(t *testing.T, a *e2b.Adapter, _ *e2btest.Server, h paddock.Handle) (string, error) {
		opts := paddock.ExecOpts{}
		if timeout > 0 {
			opts.Timeout = paddock.Duration(timeout)
		}
		began := time.Now()
		res, err := a.Exec(ctxFor(t, 10*time.Minute), h, paddock.NewCmd("true"), opts)
		if timeout > 0 {
			assert.Less(t, time.Since(began), timeout+2*time.Minute, "the deadline ends the call, whatever envd does")
		}
		return fmt.Sprintf("out=%q err=%q code=%d", res.Stdout, res.Stderr, res.ExitCode), err
	}
}

// spawnAndRead spawns a command and reads its stream to the end; the
// terminal error event is the answer's error.
func spawnAndRead(t *testing.T, a *e2b.Adapter, _ *e2btest.Server, h paddock.Handle) (string, error) {
	st, err := a.Spawn(ctxFor(t, 30*time.Second), h, paddock.NewCmd("true"), paddock.SpawnOpts{})
	if err != nil {
		return "", err
	}
	defer st.Close()
	return readAll(t, st)
}

// readAll summarises a stream's events; its error event is the error.
func readAll(t *testing.T, st paddock.Stream) (string, error) {
	var out, errb []byte
	for {
		ev, err := st.Next(ctxFor(t, 30*time.Second))
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
			_, err := st.Next(ctxFor(t, 5*time.Second))
			require.ErrorIs(t, err, io.EOF, "nothing follows the exit")
			return fmt.Sprintf("out=%q err=%q exit=%d", out, errb, ev.Code), nil
		case paddock.EventError:
			return fmt.Sprintf("out=%q err=%q", out, errb), ev.Err
		}
	}
}

// writeStdin writes to a live cat whose stdin request meets the fault.
func writeStdin(t *testing.T, a *e2b.Adapter, _ *e2btest.Server, h paddock.Handle) (string, error) {
	st, err := a.Spawn(ctxFor(t, 30*time.Second), h, paddock.NewCmd("cat"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	defer st.Close()
	return "", st.WriteStdin(ctxFor(t, 30*time.Second), []byte("hello"))
}

func listSessions(t *testing.T, a *e2b.Adapter, _ *e2btest.Server, h paddock.Handle) (string, error) {
	sessions, err := a.ListSessions(ctxFor(t, 30*time.Second), h)
	return fmt.Sprint(sessions), err
}

func readFile(path string) func(*testing.T, *e2b.Adapter, *e2btest.Server, paddock.Handle) (string, error) {
	return func(t *testing.T, a *e2b.Adapter, _ *e2btest.Server, h paddock.Handle) (string, error) {
		rc, err := a.ReadFile(ctxFor(t, 30*time.Second), h, path)
		if err != nil {
			return "", err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		return string(b), err
	}
}

func writeFile(t *testing.T, a *e2b.Adapter, _ *e2btest.Server, h paddock.Handle) (string, error) {
	return "", a.WriteFile(ctxFor(t, 30*time.Second), h, "/tmp/f.txt", 0o644, strings.NewReader("data"))
}

// attachAfter runs a detachable command to its exit, replaces its exit
// record with record ("" removes it), and attaches to the session.
func attachAfter(record string) func(*testing.T, *e2b.Adapter, *e2btest.Server, paddock.Handle) (string, error) {
	return func(t *testing.T, a *e2b.Adapter, _ *e2btest.Server, h paddock.Handle) (string, error) {
		c := ctxFor(t, 2*time.Minute) // one budget for several calls, under CI's load
		st, err := a.Spawn(c, h, paddock.NewCmd("sh", "-c", "echo ran; exit 3"), paddock.SpawnOpts{Detachable: true})
		require.NoError(t, err)
		got, err := readAll(t, st)
		require.NoError(t, err)
		require.Equal(t, `out="ran\n" err="" exit=3`, got)
		require.NoError(t, st.Close())
		exitFile := "/home/user/" + e2b.JournalDir(st.SessionID()) + "/exit"
		if record == "" {
			res, err := a.Exec(c, h, paddock.NewCmd("rm", exitFile), paddock.ExecOpts{})
			require.NoError(t, err)
			require.Zero(t, res.ExitCode)
		} else {
			require.NoError(t, a.WriteFile(c, h, exitFile, 0o644, strings.NewReader(record)))
		}
		at, err := a.Attach(c, h, st.SessionID(), paddock.AttachOpts{})
		if err != nil {
			return "", err
		}
		defer at.Close()
		return readAll(t, at)
	}
}

// ctxFor is a context that ends with the test or after d.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return c
}
