package e2b_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
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
			call:   spawnAndRead, want: "he||3", sends: startOnce},
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
			call: attachAfter("17\n"), want: "ran\n||17"},
		"a journal whose exit record says 9": {
			call: attachAfter("9\n"), want: "ran\n||9"},
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
	sent := adaptertest.Sends(t, srv, tc.sends)
	for route, faults := range tc.faults {
		for _, f := range faults {
			srv.Fail(route, f)
		}
	}
	got, err := tc.call(t, a, srv, h)
	captured.Err(err)
	adaptertest.Answered(t, got, err, tc.want, tc.kind, tc.detail, srv.Key())
	sent()
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
	return adaptertest.Summary(t, st, 30*time.Second)
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
		got, err := adaptertest.Summary(t, st, 30*time.Second)
		require.NoError(t, err)
		require.Equal(t, "ran\n||3", got)
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
		return adaptertest.Summary(t, at, 30*time.Second)
	}
}

// ctxFor is a context that ends with the test or after d.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return c
}

// The file operations on envd's Filesystem service keep the contract
// where envd differs: Remove of an absent path is not_found and of a
// directory with entries invalid (envd's Remove is quiet and recursive);
// MakeDir without Parents needs the parent (envd's makes them) and sets
// the mode asked for; a link is described as a link, with the target envd
// resolves.
func TestFileOperationsOverEnvd(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	c := ctxFor(t, 2*time.Minute) // one budget for the whole sequence: CI's load once took it past 30 s

	require.ErrorIs(t, paddock.MakeDir(c, a, h, "/home/user/none/d", paddock.MakeDirOpts{}), paddock.ErrNotFound)
	require.NoError(t, paddock.MakeDir(c, a, h, "/home/user/d", paddock.MakeDirOpts{Mode: 0o700}))
	info, err := paddock.Stat(c, a, h, "/home/user/d")
	require.NoError(t, err)
	require.Equal(t, paddock.FileDir, info.Type)
	require.Equal(t, fs.FileMode(0o700), info.Mode)
	require.NoError(t, a.WriteFile(c, h, "/home/user/d/f.txt", 0o644, strings.NewReader("hello")))
	require.ErrorIs(t, paddock.MakeDir(c, a, h, "/home/user/d/f.txt", paddock.MakeDirOpts{Parents: true}), paddock.ErrAlreadyExists,
		"a file is in the way")

	res, err := a.Exec(c, h, paddock.NewCmd("ln", "-s", "/home/user/d/f.txt", "/home/user/d/link"), paddock.ExecOpts{})
	require.NoError(t, err)
	require.Zero(t, res.ExitCode, string(res.Stderr))
	entries, err := paddock.ListDir(c, a, h, "/home/user/d")
	require.NoError(t, err)
	require.Len(t, entries, 2)
	require.Equal(t, "f.txt", entries[0].Name)
	require.EqualValues(t, 5, entries[0].Size)
	require.Equal(t, paddock.FileSymlink, entries[1].Type)
	require.Equal(t, "/home/user/d/f.txt", entries[1].Target)

	require.ErrorIs(t, paddock.Remove(c, a, h, "/home/user/d", paddock.RemoveOpts{}), paddock.ErrInvalid)
	require.ErrorIs(t, paddock.Remove(c, a, h, "/home/user/absent", paddock.RemoveOpts{}), paddock.ErrNotFound)
	require.NoError(t, paddock.Rename(c, a, h, "/home/user/d", "/home/user/e"))
	require.NoError(t, paddock.Remove(c, a, h, "/home/user/e", paddock.RemoveOpts{Recursive: true}))
	_, err = paddock.Stat(c, a, h, "/home/user/e/f.txt")
	require.ErrorIs(t, err, paddock.ErrNotFound)
}

// A 256 MiB file goes up and comes back streamed both ways: the bytes are
// the same, and the heap of the whole process (adapter and e2btest
// together) never grows by 32 MiB. Not parallel: the heap is shared.
func TestFilesStreamBothWaysInBoundedMemory(t *testing.T) {
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	adaptertest.StreamsFiles(t, ctxFor(t, 5*time.Minute), a, h, "/tmp/big.bin")
}

// A TTY spawn runs on an 80x24 terminal (envd's pty start): the command
// sees a terminal, typed input is echoed, CloseStdin types ^D, and the
// exit code comes back. A detachable spawn cannot have one (its journal
// is pipes).
func TestTTYSpawn(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	require.True(t, a.Capabilities().Has(paddock.CapTTY))

	script := `test -t 0 && test -t 1 && echo "tty $(stty size)"; read line; echo "got $line"; cat; exit 7`
	st, err := a.Spawn(ctxFor(t, 30*time.Second), h, paddock.NewCmd("sh", "-c", script), paddock.SpawnOpts{TTY: true, Stdin: true})
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, st.WriteStdin(ctx, []byte("hello\n")))
	require.NoError(t, st.CloseStdin(ctx), "^D ends cat")
	var out strings.Builder
	for {
		ev, err := st.Next(ctxFor(t, 30*time.Second))
		require.NoError(t, err)
		require.NotEqual(t, paddock.EventStderr, ev.Kind, "a terminal has no separate stderr")
		if ev.Kind == paddock.EventStdout {
			out.WriteString(string(ev.Data))
			continue
		}
		require.Equal(t, paddock.EventExit, ev.Kind, "%v", ev.Err)
		assert.Equal(t, 7, ev.Code)
		break
	}
	assert.Contains(t, out.String(), "tty 24 80\r\n", "the command runs on an 80x24 terminal")
	assert.Contains(t, out.String(), "got hello\r\n", "input is typed into the terminal")

	var start struct {
		Pty json.RawMessage `json:"pty"`
	}
	for _, r := range srv.Requests() {
		if r.Route == startRoute {
			require.NoError(t, json.Unmarshal([]byte(r.Body[5:]), &start)) // past the envelope's head
		}
	}
	assert.JSONEq(t, `{"size":{"cols":80,"rows":24}}`, string(start.Pty))

	_, err = a.Spawn(ctx, h, paddock.NewCmd("true"), paddock.SpawnOpts{TTY: true, Detachable: true})
	require.ErrorIs(t, err, paddock.ErrInvalid)
}

// The journal wrapper hands every byte of every argument to the command,
// copies stdout and stderr into the session's files as they pass through,
// and records the exit code last.
func TestJournalWrapperIsExactAndRecordsTheExit(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	args := []string{"it's", "two words", "$HOME", `back\slash`, "new\nline", "\xff\xfe not utf-8", "", "trailing\n\n"}
	script := `for a do printf '%s\0' "$a"; done; printf 'to stderr' >&2; exit 17`
	cmd := e2b.JournalCmd("s-1", paddock.NewCmd("/bin/sh", append([]string{"-c", script, "sh"}, args...)...))
	c := exec.Command(cmd.Path, cmd.Args...)
	c.Env = append(os.Environ(), "HOME="+home)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr)
	assert.Equal(t, 17, exitErr.ExitCode(), "the wrapper exits with the command's code")

	want := strings.Join(args, "\x00") + "\x00"
	assert.Equal(t, want, stdout.String(), "every argument exactly")
	assert.Equal(t, "to stderr", stderr.String())
	dir := filepath.Join(home, e2b.JournalDir("s-1"))
	out, err := os.ReadFile(filepath.Join(dir, "out"))
	require.NoError(t, err)
	assert.Equal(t, want, string(out), "the journal holds the same bytes")
	errb, err := os.ReadFile(filepath.Join(dir, "err"))
	require.NoError(t, err)
	assert.Equal(t, "to stderr", string(errb))
	record, err := os.ReadFile(filepath.Join(dir, "exit"))
	require.NoError(t, err)
	code, ok := e2b.ParseExit(record)
	require.True(t, ok)
	assert.Equal(t, 17, code)
	line, err := os.ReadFile(filepath.Join(dir, "cmd"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(line), "/bin/sh -c "), string(line))
	left, err := filepath.Glob(filepath.Join(dir, "*.fifo"))
	require.NoError(t, err)
	assert.Empty(t, left, "no pipes left behind")
}

func TestParseExit(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]struct {
		code int
		ok   bool
	}{
		"17\n": {17, true}, "0\n": {0, true}, "255\n": {255, true},
		"7": {0, false}, "bad\n": {0, false}, "": {0, false}, "-1\n": {0, false}, "256\n": {0, false}, "1\n2\n": {0, false},
	} {
		code, ok := e2b.ParseExit([]byte(in))
		assert.Equal(t, want.ok, ok, "%q", in)
		assert.Equal(t, want.code, code, "%q", in)
	}
}

// FuzzParseExit: a journal's exit record is a code in 0..255 or nothing,
// whatever the file holds, and every code reads back from its record.
func FuzzParseExit(f *testing.F) {
	for _, s := range []string{"17\n", "0\n", "255\n", "bad\n", "", "7", " 3\n", "-1\n", "1e3\n", "\xff\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		code, ok := e2b.ParseExit(b)
		if !ok {
			return
		}
		if code < 0 || code > 255 {
			t.Fatalf("code %d from %q", code, b)
		}
		back, ok := e2b.ParseExit([]byte(strconv.Itoa(code) + "\n"))
		if !ok || back != code {
			t.Fatalf("the record of %d reads back as %d, %v", code, back, ok)
		}
	})
}

// FuzzProcessStream: whatever bytes envd's process stream carries, Exec
// answers (never hangs, never panics) with an exit or an error of the
// taxonomy, and never more output than the body held.
func FuzzProcessStream(f *testing.F) {
	for _, seed := range [][]string{
		{started, he, llo, dropped, exit3, clean},
		{started, he, clean},
		{started, he},
		{clean},
		{started, e2btest.EndStream(`{"error":{"code":"unavailable","message":"gone"}}`)},
		{started, e2btest.Envelope(0, 4096, `{"event":{}}`)},
		{started, e2btest.Envelope(0x40, 2, `{}`), clean},
		{started, e2btest.Message(`{"event":{"data":{"stderr":"%%%"}}}`), exit0, clean},
		{started, e2btest.Message(`{"event":{"end":{"status":"signal: killed"}}}`), clean},
		{started, exit3, late, exit0, clean},
	} {
		f.Add([]byte(strings.Join(seed, "")))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		a := build(t, e2b.Config{APIKey: paddock.NewSecret("e2b_fuzz"), BaseURL: "http://control.invalid", EnvdURL: "http://envd.invalid",
			Transport: cannedEnvd(body)})
		c, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := a.Exec(c, a.BuildHandle("box"), paddock.NewCmd("true"), paddock.ExecOpts{})
		if c.Err() != nil {
			t.Fatalf("Exec did not answer within 10s: %v", err)
		}
		if err != nil {
			if paddock.KindOf(err) == "" {
				t.Fatalf("an error outside the taxonomy: %v", err)
			}
			return
		}
		if n := len(res.Stdout) + len(res.Stderr); n > len(body) {
			t.Fatalf("%d bytes of output from a %d-byte body", n, len(body))
		}
	})
}

// cannedEnvd answers the sandbox lookup with one running sandbox, every
// process start with body, and any other envd call with {}.
func cannedEnvd(body []byte) http.RoundTripper {
	return roundTrip(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		answer := func(status int, contentType, b string) *http.Response {
			return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {contentType}},
				Body: io.NopCloser(strings.NewReader(b)), Request: r}
		}
		switch {
		case r.URL.Path == "/v2/sandboxes":
			return answer(http.StatusOK, "application/json", `[{"sandboxID":"ifuzz","state":"running","metadata":{"paddock_name":"box","paddock":"1"}}]`), nil
		case strings.HasSuffix(r.URL.Path, "/Start"):
			return answer(http.StatusOK, "application/connect+json", string(body)), nil
		}
		return answer(http.StatusOK, "application/json", `{}`), nil
	})
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
