package sprites

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
)

// execMaxRun is max_run_after_disconnect for Exec: a command whose exec
// was abandoned (a timeout) does not run on for ever.
const execMaxRun = 10 * time.Second

// dial opens an exec or attach WebSocket; a refused upgrade is normalised
// from its status and body. A 503 refusal is tried again (WakeAttempts in
// all): a new sprite refuses exec for its first seconds, and a refused
// upgrade started nothing.
func (a *Adapter) dial(ctx context.Context, path string, q url.Values) (*websocket.Conn, capabilities, error) {
	if a.cfg.Token.IsZero() {
		return nil, nil, errNoToken
	}
	var (
		conn *websocket.Conn
		caps capabilities
	)
	err := paddock.WithBackoff(ctx, func(ctx context.Context) error {
		var err error
		conn, caps, err = a.dialOnce(ctx, path, q)
		return err
	}, paddock.BackoffOpts{Attempts: a.cfg.WakeAttempts, Label: "sprites exec upgrade", Logger: a.log, Retriable: refusedWhileStarting})
	return conn, caps, err
}

// capabilities are what the server listed in X-Sprite-Capabilities on an
// exec upgrade (comma-separated names).
type capabilities map[string]bool

func parseCapabilities(header string) capabilities {
	caps := capabilities{}
	for _, name := range strings.Split(header, ",") {
		if name = strings.TrimSpace(name); name != "" {
			caps[name] = true
		}
	}
	return caps
}

// refusedWhileStarting is an upgrade refused with 503.
func refusedWhileStarting(err error) bool {
	var u *paddock.UnavailableError
	return errors.As(err, &u) && u.Status == http.StatusServiceUnavailable
}

// dialOnce makes one upgrade attempt.
func (a *Adapter) dialOnce(ctx context.Context, path string, q url.Values) (*websocket.Conn, capabilities, error) {
	base := strings.TrimRight(a.cfg.BaseURL, "/")
	switch {
	case strings.HasPrefix(base, "https://"):
		base = "wss://" + strings.TrimPrefix(base, "https://")
	case strings.HasPrefix(base, "http://"):
		base = "ws://" + strings.TrimPrefix(base, "http://")
	}
	u := base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	dialer := websocket.Dialer{HandshakeTimeout: a.cfg.Timeout, Proxy: http.ProxyFromEnvironment,
		ReadBufferSize: 1 << 16, WriteBufferSize: 1 << 16}
	header := http.Header{"Authorization": {"Bearer " + a.cfg.Token.Reveal()}}
	start := time.Now()
	conn, res, err := dialer.DialContext(ctx, u, header)
	if err != nil {
		if res != nil {
			defer res.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
			err = statusError(res.StatusCode, res.Header, body)
			a.rest.LogCall("WS", path, res.StatusCode, start, err)
			return nil, nil, err
		}
		err = httpx.Transport(err)
		a.rest.LogCall("WS", path, 0, start, err)
		return nil, nil, err
	}
	a.rest.LogCall("WS", path, res.StatusCode, start, nil)
	conn.SetReadLimit(16 << 20)
	return conn, parseCapabilities(res.Header.Get("X-Sprite-Capabilities")), nil
}

// execQuery is the exec parameters: argv as repeated cmd (argv[0]
// included), path, env (which replaces the sprite's default environment
// when given), dir, tty (with rows and cols), stdin and
// max_run_after_disconnect.
func execQuery(cmd paddock.Cmd, tty, stdin bool, size *paddock.TermSize, maxRun time.Duration) url.Values {
	q := url.Values{}
	for _, arg := range cmd.Argv() {
		q.Add("cmd", arg)
	}
	q.Set("path", cmd.Path)
	for _, e := range cmd.Env {
		q.Add("env", e.Name+"="+e.Value)
	}
	if cmd.Dir != "" {
		q.Set("dir", cmd.Dir)
	}
	q.Set("tty", strconv.FormatBool(tty))
	if tty {
		if size == nil {
			size = &paddock.TermSize{Cols: 80, Rows: 24}
		}
		q.Set("rows", strconv.Itoa(size.Rows))
		q.Set("cols", strconv.Itoa(size.Cols))
	}
	q.Set("stdin", strconv.FormatBool(stdin))
	q.Set("max_run_after_disconnect", maxRun.String())
	return q
}

// start opens a command stream and waits for its session info.
func (a *Adapter) start(ctx context.Context, sprite, path string, q url.Values, tty bool) (*stream, error) {
	conn, caps, err := a.dial(ctx, path, q)
	if err != nil {
		return nil, err
	}
	st := newStream(conn, tty, a.keep, a.restores.Since(sprite))
	st.a, st.sprite, st.caps = a, sprite, caps
	info, err := st.awaitInfo(ctx, a.cfg.Timeout)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	st.sessionID, st.tty = info.ID, info.TTY
	return st, nil
}

// Exec runs cmd to completion over one WebSocket: stdout and stderr apart
// (or merged in arrival order) under the output cap; a nonzero exit is
// data; a socket that ends without an exit is closed_before_exit, its
// output discarded. Past the timeout or the cap the socket is closed, and
// Sprites ends the command execMaxRun later.
func (a *Adapter) Exec(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.ExecOpts) (paddock.ExecResult, error) {
	dl, out, err := paddock.StartExec(ctx, cmd, opts, a.cfg.Exec, nil)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	ctx, cancel := dl.Context(ctx)
	defer cancel()
	st, err := a.start(ctx, h.Name, spritePath(h.Name, "exec"), execQuery(cmd, false, false, nil, execMaxRun), false)
	if err != nil {
		if dl.Finite() && dl.Expired() {
			return paddock.ExecResult{}, dl.Err()
		}
		return paddock.ExecResult{}, err
	}
	defer st.Close()
	return paddock.CollectExec(ctx, st, dl, out, httpx.Transport)
}

// ExecLimits are the bounds of Exec's timeouts the adapter was configured
// with, under which the runtime fixes each exec's deadline.
func (a *Adapter) ExecLimits() paddock.ExecLimits { return a.cfg.Exec }
