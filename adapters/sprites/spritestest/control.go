package spritestest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// controlPrefix marks a control connection's envelopes (text messages);
// every other message is the running operation's data.
const controlPrefix = "control:"

// controlSocket is the WebSocket /v1/sprites/{name}/control: the SDKs'
// pooled mode, one operation at a time over one connection. An
// envelope {type: op.start, op: exec, args: {cmd, env, dir, tty, rows,
// cols, stdin}} starts a command as the exec socket would; its frames
// follow as on that socket (session_info, output, the exit), then
// op.complete with its exit code, or op.error when it could not start, its
// output was cut, or an operation is already running. Data messages go to
// the running command as the exec socket's input does. WithoutControl
// answers 404 instead, as a sprite without control connections does.
func (s *Server) controlSocket(w http.ResponseWriter, r *http.Request, _ []byte) {
	if s.withoutControl {
		notFound(w, r, nil)
		return
	}
	if _, ok := s.touched(w, r); !ok {
		return
	}
	s.socket(w, r, func(conn *websocket.Conn) {
		conn.SetPingHandler(func(data string) error { return pong(conn, data) })
		var (
			mu      sync.Mutex // one writer at a time; guards current
			current *session
			ops     sync.WaitGroup
		)
		write := func(kind int, data []byte) error {
			mu.Lock()
			defer mu.Unlock()
			_ = conn.SetWriteDeadline(time.Now().Add(socketWriteTimeout))
			return conn.WriteMessage(kind, data)
		}
		envelope := func(kind string, args map[string]any) {
			b, _ := json.Marshal(map[string]any{"type": kind, "args": args})
			_ = write(websocket.TextMessage, append([]byte(controlPrefix), b...))
		}
		gone := make(chan struct{})
		defer ops.Wait()
		defer close(gone)
		conn.SetReadLimit(16 << 20)
		for {
			kind, data, err := conn.ReadMessage()
			if err != nil {
				return
			}
			rest, isControl := bytes.CutPrefix(data, []byte(controlPrefix))
			if kind != websocket.TextMessage || !isControl {
				mu.Lock()
				ss := current
				mu.Unlock()
				if ss != nil {
					ss.input(kind, data)
				}
				continue
			}
			var start struct {
				Type string `json:"type"`
				Op   string `json:"op"`
				Args struct {
					Cmd   []string `json:"cmd"`
					Env   []string `json:"env"`
					Dir   string   `json:"dir"`
					TTY   string   `json:"tty"`
					Rows  string   `json:"rows"`
					Cols  string   `json:"cols"`
					Stdin string   `json:"stdin"`
				} `json:"args"`
			}
			if json.Unmarshal(rest, &start) != nil || start.Type != "op.start" {
				continue // envelopes other than a start are the server's to send
			}
			mu.Lock()
			busy := current != nil
			mu.Unlock()
			if busy {
				envelope("op.error", map[string]any{"error": "operation already in progress"})
				continue
			}
			if start.Op != "exec" {
				envelope("op.error", map[string]any{"error": "unknown operation: " + start.Op})
				continue
			}
			q := url.Values{"cmd": start.Args.Cmd, "env": start.Args.Env}
			if start.Args.Env == nil {
				delete(q, "env")
			}
			for k, v := range map[string]string{"dir": start.Args.Dir, "tty": start.Args.TTY, "rows": start.Args.Rows, "cols": start.Args.Cols, "stdin": start.Args.Stdin} {
				if v != "" {
					q.Set(k, v)
				}
			}
			ss, failure := s.startOp(r, q)
			if ss == nil {
				envelope("op.error", map[string]any{"error": failure})
				continue
			}
			c := &client{s: s, wake: make(chan struct{}, 1), gone: make(chan struct{})}
			ss.subscribe(c)
			mu.Lock()
			current = ss
			mu.Unlock()
			ops.Add(1)
			go func() {
				defer ops.Done()
				m, ok := c.forward(func(m message) error { return write(m.kind, m.data) }, gone)
				close(c.gone)
				ss.unsubscribe(c)
				mu.Lock()
				current = nil
				mu.Unlock()
				switch {
				case !ok:
				case m.abort:
					envelope("op.error", map[string]any{"error": "the command's output was cut"})
				default:
					ss.mu.Lock()
					code := ss.exitCode
					ss.mu.Unlock()
					envelope("op.complete", map[string]any{"exitCode": code})
				}
			}()
		}
	})
}

// startOp admits and starts a control connection's exec as the exec
// socket would (the same query), or says why not.
func (s *Server) startOp(r *http.Request, q url.Values) (*session, string) {
	p, err := parseExec(q)
	if err == nil && p.attach != "" {
		err = errHTTPExecSocketOnly
	}
	if err != nil {
		return nil, err.Error()
	}
	refusal := httptest.NewRecorder()
	sp, id, _, ok := s.admit(refusal, r, p, false)
	if !ok {
		var answer struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(refusal.Body.Bytes(), &answer)
		return nil, answer.Error
	}
	return s.startSession(sp, id, p), ""
}
