package daytona

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// Spawn and attach run on Daytona sessions: one session per spawn, one
// async command in it, its journal followed over the toolbox's log
// WebSocket from byte zero. The command runs under a wrapper that writes
// its stdout and stderr base64-encoded, a line per read, so the journal
// (which drops NUL bytes and completes a last line) keeps every byte;
// stdin comes base64-encoded a line at a time through the daemon's input
// route, and a lone "." line is its end. The exit code is the daemon's
// record of the command, read once the follow closes, unless the wrapper
// said it lost the command's own code (unknownExitLine).

// Session id prefixes: detachable spawns are sessions; the others run in
// sessions that are not listed.
const (
	sessionPrefix = "paddock-"
	runPrefix     = "paddockrun-"
)

// newSessionName is prefix plus 16 random hex digits.
func newSessionName(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// maxInputLine is how many raw bytes one input request carries.
const maxInputLine = 48 << 10

// unknownExitLine is the stdout line (never base64) the spawn wrapper
// writes when its command's exit code was not recorded (the subshell that
// was to record it was killed): the daemon's exit code is then the
// wrapper's 125, not the command's, and the stream ends
// closed_before_exit.
const unknownExitLine = "!"

// lostExitCode is the code the wrapper exits with when it wrote
// unknownExitLine.
const lostExitCode = 125

// spawnScript is the wrapper of cmdLine: its first line names the command
// (what ListSessions shows); it never calls exit or a bare wait, which
// would kill or hang the session's shell. With stdin, a decoder in the
// background turns the input lines into the command's stdin through a
// FIFO, and is killed once the command ends (the daemon's input never
// ends by itself).
func spawnScript(display, cmdLine string, stdin bool) string {
	in, feed, stop := "/dev/null", "", ""
	if stdin {
		in = `"$__p_d/in"`
		feed = `mkfifo "$__p_d/in" && { __p_dec <&0 >"$__p_d/in" 2>/dev/null & __p_dp=$!; }
`
		stop = ` kill $__p_dp 2>/dev/null;`
	}
	return "# paddock: " + strings.ReplaceAll(display, "\n", " ") + `
__p_enc() { while :; do __p_c=$(dd bs=65536 count=1 2>/dev/null | base64 | tr -d '\n'); [ -n "$__p_c" ] || break; printf '%s\n' "$__p_c"; done; }
__p_dec() { while IFS= read -r __p_l; do [ "$__p_l" = . ] && break; printf %s "$__p_l" | base64 -d; done; }
__p_d=$(mktemp -d)
` + feed + `{ { { ( ` + cmdLine + ` ) <` + in + `; echo $? >"$__p_d/c";` + stop + ` } 2>&1 1>&3 3>&- | __p_enc >&2; } 3>&1 | __p_enc; }
__p_code=$(cat "$__p_d/c" 2>/dev/null); case $__p_code in ''|*[!0-9]*) __p_code=` + strconv.Itoa(lostExitCode) + `; echo ` + unknownExitLine + `;; esac
rm -rf "$__p_d"; (exit $__p_code)`
}

// display is how a command reads in a session listing.
func display(cmd paddock.Cmd) string {
	return strings.Join(append([]string{cmd.Path}, cmd.Args...), " ")
}

// Spawn starts cmd in a session of its own and returns its stream once
// the daemon named the command. Closing the stream deletes the session
// (which kills the command) unless it is detachable.
func (a *Adapter) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts) (paddock.Stream, error) {
	if err := paddock.ValidateSpawn(a, cmd, opts); err != nil {
		return nil, err
	}
	if !textOnly(cmd) {
		return nil, &paddock.InvalidError{Detail: paddock.DetailCommand + ": Daytona carries commands as UTF-8 text"}
	}
	restored := a.restores.Since(h.Name) // before the lookup: a restore may replace the sandbox found
	tb, err := a.toolboxOf(ctx, h)
	if err != nil {
		return nil, err
	}
	prefix := runPrefix
	if opts.Detachable {
		prefix = sessionPrefix
	}
	session := newSessionName(prefix)
	if err := tb.rest.Expect(ctx, a.client, http.MethodPost, "/process/session", map[string]string{"sessionId": session}, http.StatusCreated, http.StatusOK); err != nil {
		return nil, err
	}
	var answer execAnswer
	err = tb.rest.JSON(ctx, a.client, http.MethodPost, "/process/session/"+session+"/exec",
		nil, map[string]any{"command": spawnScript(display(cmd), commandLine(cmd), opts.Stdin), "runAsync": true, "suppressInputEcho": true}, &answer)
	var id string
	if err == nil {
		id, err = answer.commandID()
	}
	if err != nil {
		tb.deleteSession(session)
		return nil, err
	}
	st := a.follow(tb, session, id, opts.Stdin, restored)
	st.delete = !opts.Detachable
	if opts.Detachable {
		st.session = session
	}
	return st, nil
}

// execAnswer is an async exec's answer: the command's id as cmdId (some
// daemons say commandId or id).
type execAnswer struct {
	CmdID     string `json:"cmdId"`
	CommandID string `json:"commandId"`
	ID        string `json:"id"`
}

// commandID is the answer's command id.
func (body execAnswer) commandID() (string, error) {
	for _, id := range []string{body.CmdID, body.CommandID, body.ID} {
		if id != "" {
			return id, nil
		}
	}
	return "", &paddock.ProviderError{Provider: paddock.ProviderDaytona, Detail: "an exec answer without a command id"}
}

// deleteSession deletes a session (which kills its processes), within a
// bound of its own; an absent one is fine.
func (tb *toolbox) deleteSession(session string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = tb.rest.Expect(ctx, tb.a.client, http.MethodDelete, "/process/session/"+session, nil,
		http.StatusNoContent, http.StatusOK, http.StatusNotFound)
}

// stream follows one session command's journal.
type stream struct {
	a        *Adapter
	tb       *toolbox
	sessName string // the daemon's session
	session  string // the contract's session id ("" for a spawn that is not detachable)
	cmd      string
	stdin    bool
	delete   bool        // Close deletes the session
	restored func() bool // whether a restore of the sandbox began since it started

	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex // conn, closed, done
	conn    *websocket.Conn
	closed  bool
	done    bool
	out     wrapped // the journal read so far
	pending []paddock.Event
	inMu    sync.Mutex // one stdin request at a time, in order
}

// follow returns a stream of the command's journal; the socket is dialled
// by the first Next.
func (a *Adapter) follow(tb *toolbox, session, cmd string, stdin bool, restored func() bool) *stream {
	s := &stream{a: a, tb: tb, sessName: session, cmd: cmd, stdin: stdin, restored: restored}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// dial opens the follow socket.
func (s *stream) dial(ctx context.Context) (*websocket.Conn, error) {
	u := "ws" + strings.TrimPrefix(s.tb.rest.BaseURL, "http") + "/process/session/" + s.sessName + "/command/" + s.cmd + "/logs?follow=true"
	req, err := http.NewRequest(http.MethodGet, "http://placeholder", nil)
	if err != nil {
		return nil, err
	}
	if err := s.tb.rest.Authorize(req); err != nil {
		return nil, err
	}
	dialer := websocket.Dialer{HandshakeTimeout: s.a.cfg.Timeout, ReadBufferSize: 64 << 10}
	conn, res, err := dialer.DialContext(ctx, u, req.Header)
	if res != nil {
		defer res.Body.Close()
		if err != nil && res.StatusCode != http.StatusSwitchingProtocols {
			body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
			if res.StatusCode == http.StatusNotFound {
				return nil, paddock.ErrClosedBeforeExit // the session went away
			}
			return nil, s.tb.rest.StatusError(res.StatusCode, res.Header, body)
		}
	}
	if err != nil {
		return nil, httpx.Transport(err)
	}
	conn.SetReadLimit(1 << 20)
	return conn, nil
}

// Next returns the command's next output, then its exit (or an error),
// then io.EOF.
func (s *stream) Next(ctx context.Context) (paddock.Event, error) {
	for {
		s.mu.Lock()
		if len(s.pending) > 0 {
			ev := s.pending[0]
			s.pending = s.pending[1:]
			if ev.Kind == paddock.EventExit || ev.Kind == paddock.EventError {
				s.done = true
			}
			s.mu.Unlock()
			return ev, nil
		}
		if s.done || s.closed {
			s.mu.Unlock()
			return paddock.Event{}, io.EOF
		}
		conn := s.conn
		s.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return paddock.Event{}, err
		}
		if conn == nil {
			c, err := s.dial(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return paddock.Event{}, ctx.Err()
				}
				s.finish(paddock.Failed(err))
				continue
			}
			s.mu.Lock()
			if s.closed {
				s.mu.Unlock()
				_ = c.Close()
				return paddock.Event{}, io.EOF
			}
			s.conn, conn = c, c
			s.mu.Unlock()
		}
		stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
		_, frame, err := conn.ReadMessage()
		stop()
		if err != nil {
			if ctx.Err() != nil {
				return paddock.Event{}, ctx.Err()
			}
			s.ended(err)
			continue
		}
		if err := s.take(frame); err != nil {
			s.finish(paddock.Failed(err))
		}
	}
}

// take decodes a frame and queues its output.
func (s *stream) take(frame []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Write(frame, func(ev paddock.Event) { s.pending = append(s.pending, ev) })
}

// ended handles the end of the follow: the daemon's record of the command
// says its exit code; without one, or when the wrapper said the code it
// records is not the command's, the command's fate is unknown.
func (s *stream) ended(readErr error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	_ = s.conn.Close()
	unknown := s.out.unknown
	s.mu.Unlock()
	var ce *websocket.CloseError
	if !errors.As(readErr, &ce) || unknown {
		s.finish(paddock.Failed(paddock.ErrClosedBeforeExit)) // the connection dropped, or the code was lost
		return
	}
	for attempt := range 3 {
		code, known, err := s.exitCode()
		switch {
		case err == nil && known:
			s.finish(paddock.Exit(code))
			return
		case errors.Is(err, paddock.ErrNotFound):
			s.finish(paddock.Failed(paddock.ErrClosedBeforeExit)) // the session was deleted
			return
		}
		if attempt < 2 {
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(s.a.poll):
			}
		}
	}
	s.finish(paddock.Failed(paddock.ErrClosedBeforeExit))
}

// exitCode reads the daemon's record of the command.
func (s *stream) exitCode() (int, bool, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.a.cfg.Timeout)
	defer cancel()
	var rec struct {
		ExitCode *int `json:"exitCode"`
	}
	if err := s.tb.rest.Found(ctx, s.a.client, http.MethodGet, "/process/session/"+s.sessName+"/command/"+s.cmd, nil, nil, &rec); err != nil {
		return 0, false, err
	}
	if rec.ExitCode == nil {
		return 0, false, nil
	}
	return *rec.ExitCode, true, nil
}

// finish queues the terminal event after what is pending (the rest of a
// partial line is not output the wrapper finished). A restore removes
// the sandbox, so a command that ends once one began says so
// (unavailable(checkpoint_restored)), whatever ended it.
func (s *stream) finish(ev paddock.Event) {
	if s.restored() {
		ev = paddock.Failed(&paddock.UnavailableError{Detail: paddock.DetailCheckpointRestored})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, ev)
}

// WriteStdin sends p to the command, base64-encoded, a line per request.
func (s *stream) WriteStdin(ctx context.Context, p []byte) error {
	if !s.stdin {
		return &paddock.WriteFailedError{Detail: "stdin was not requested for this subscription"}
	}
	for len(p) > 0 {
		n := min(len(p), maxInputLine)
		if err := s.input(ctx, base64.StdEncoding.EncodeToString(p[:n])); err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// CloseStdin sends the end line; a command gone needs none.
func (s *stream) CloseStdin(ctx context.Context) error {
	if !s.stdin {
		return nil
	}
	err := s.input(ctx, ".")
	if errors.Is(err, paddock.ErrCommandExited) {
		return nil
	}
	return err
}

// input posts one line to the command's stdin: a command that ended has
// exited (the daemon says 410 once it has seen the exit, 500 before).
func (s *stream) input(ctx context.Context, line string) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return paddock.ErrCommandExited
	}
	s.inMu.Lock()
	defer s.inMu.Unlock()
	status, header, data, err := s.tb.rest.Call(ctx, s.a.client, http.MethodPost,
		"/process/session/"+s.sessName+"/command/"+s.cmd+"/input", nil, map[string]string{"data": line})
	switch {
	case err != nil:
		return &paddock.WriteFailedError{Detail: err.Error()}
	case status == http.StatusNoContent || status == http.StatusOK:
		return nil
	case status == http.StatusGone || status == http.StatusNotFound:
		return paddock.ErrCommandExited
	case status == http.StatusInternalServerError && strings.Contains(string(data), "input pipe"):
		return paddock.ErrCommandExited // ended, its exit not yet read
	}
	return &paddock.WriteFailedError{Detail: s.tb.rest.StatusError(status, header, data).Error()}
}

// Close stops following; a session that is not detachable is deleted,
// which kills the command.
func (s *stream) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	conn := s.conn
	s.mu.Unlock()
	s.cancel()
	if conn != nil {
		_ = conn.Close()
	}
	if s.delete {
		s.tb.deleteSession(s.sessName)
	}
	return nil
}

// SessionID is the session a detachable spawn made ("" otherwise).
func (s *stream) SessionID() string { return s.session }
