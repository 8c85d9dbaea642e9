package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/messages"
)

// A view in the page is one WebSocket. Its first message opens a stream
// (run or attach); frames go to the browser as they come, or, for a
// terminal, are drawn on a screen kept here whose changed rows go to the
// browser (terminal.go). The browser sends stdin (a terminal's keys as
// typed), close-stdin, resize (a terminal follows the output area's size)
// and detach. The socket is written by one goroutine that takes the next
// frames only once the previous ones are on the wire, so a slow browser
// slows the command's reading (the runtime's credits), and the server's
// memory does not grow; a terminal's output is drawn as it comes, and the
// page is sent the screen each time it has drawn the last one.

// clientMessage is what the page sends.
type clientMessage struct {
	Op       string   `json:"op"` // run, attach, stdin, close_stdin, resize, detach, drawn (a terminal's screen update is on the page)
	Provider string   `json:"provider,omitempty"`
	Sandbox  string   `json:"sandbox,omitempty"`
	Argv     []string `json:"argv,omitempty"`
	Stdin    bool     `json:"stdin,omitempty"`
	TTY      bool     `json:"tty,omitempty"` // run on a terminal of cols x rows
	Cols     int      `json:"cols,omitempty"`
	Rows     int      `json:"rows,omitempty"`
	Session  string   `json:"session,omitempty"`
	Data     string   `json:"data,omitempty"`
}

// serverMessage is what the page receives.
type serverMessage struct {
	Type         string `json:"type"` // started, stdout, stderr, exit, error, failed, note (the console's word on a live view); a terminal's screen is a screenUpdate
	Ref          string `json:"ref,omitempty"`
	Session      string `json:"session,omitempty"`
	Detachable   bool   `json:"detachable,omitempty"` // started: the command survives a detach and can be attached again
	Terminal     bool   `json:"terminal,omitempty"`   // started: output comes as screen updates
	Scrollback   int    `json:"scrollback,omitempty"` // started: the lines of scrollback a terminal keeps
	Seq          uint64 `json:"seq,omitempty"`
	Data         string `json:"data,omitempty"`
	Code         int32  `json:"code"`
	OutputFrames uint64 `json:"output_frames,omitempty"`
	Reason       string `json:"reason,omitempty"`
	Detail       string `json:"detail,omitempty"`
}

var upgrader = websocket.Upgrader{
	ReadBufferSize: 32 << 10, WriteBufferSize: 32 << 10,
	Subprotocols: []string{pageProtocol},
	// Same origin only: the page this console served.
	CheckOrigin: func(r *http.Request) bool {
		u, err := url.Parse(r.Header.Get("Origin"))
		return err == nil && strings.EqualFold(u.Host, r.Host)
	},
}

const socketWriteWait = 30 * time.Second

// Defaults of consoleLimits.
const (
	defaultFirstMessageWait = 10 * time.Second
	defaultSocketsPerClient = 32
)

// consoleLimits bound what a client can hold: a WebSocket that has not
// said what it wants within firstMessage is closed, one client address
// holds at most perClient sockets (more are refused with 429 before the
// upgrade), one upload holds at most maxUpload bytes (more is 413
// invalid(file_too_large), the file left as it was), and a terminal view
// keeps scrollback lines that scrolled off its top (at most twice that
// between two updates of its page; the oldest go).
type consoleLimits struct {
	firstMessage time.Duration
	perClient    int
	maxUpload    int64 // bytes of one file upload
	scrollback   int   // lines of one terminal view
}

func (l consoleLimits) check() error {
	if l.firstMessage <= 0 || l.perClient <= 0 || l.maxUpload <= 0 || l.scrollback <= 0 {
		return errors.New("the socket, upload and scrollback limits must be positive")
	}
	return nil
}

// socketCounts is the open sockets per client address.
type socketCounts struct {
	mu   sync.Mutex
	open map[string]int
}

// take counts one more socket for client unless it holds limit already.
func (s *socketCounts) take(client string, limit int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[client] >= limit {
		return false
	}
	if s.open == nil {
		s.open = map[string]int{}
	}
	s.open[client]++
	return true
}

// release forgets one of client's sockets.
func (s *socketCounts) release(client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[client]--; s.open[client] <= 0 {
		delete(s.open, client)
	}
}

// clientAddress is the host part of a request's remote address.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (c *console) socket(w http.ResponseWriter, r *http.Request) {
	client := clientAddress(r)
	if !c.sockets.take(client, c.limits.perClient) {
		http.Error(w, fmt.Sprintf("too many open sockets from %s (at most %d)", client, c.limits.perClient), http.StatusTooManyRequests)
		return
	}
	defer c.sockets.release(client)
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered
	}
	defer conn.Close()
	conn.SetReadLimit(1 << 20)
	var first clientMessage
	_ = conn.SetReadDeadline(time.Now().Add(c.limits.firstMessage))
	if err := conn.ReadJSON(&first); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			refuse(conn, websocket.ClosePolicyViolation, fmt.Sprintf("no first message within %s", c.limits.firstMessage))
		} else {
			refuse(conn, websocket.CloseUnsupportedData, "the first message is not a JSON request")
		}
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := c.open(ctx, first)
	if err != nil {
		c.failures.Add(1)
		_ = conn.WriteJSON(serverMessage{Type: "failed", Detail: err.Error()})
		refuse(conn, websocket.ClosePolicyViolation, "the stream could not start")
		return
	}
	s := st.FrameStream
	defer s.Close() // leaving the page detaches; the session stays attachable
	var wmu sync.Mutex
	send := func(m any) error {
		wmu.Lock()
		defer wmu.Unlock()
		_ = conn.SetWriteDeadline(time.Now().Add(socketWriteWait))
		return conn.WriteJSON(m)
	}
	started := serverMessage{Type: "started", Ref: string(s.Subscription().Ref), Session: s.SessionID(), Detachable: st.detachable}
	if st.screen != nil {
		started.Terminal, started.Scrollback = true, c.limits.scrollback
	}
	if err := send(started); err != nil {
		return
	}
	go c.readClient(ctx, conn, st, send, cancel)
	if st.screen != nil {
		c.streamScreen(ctx, conn, &wmu, st, first.Op == "run", send)
		return
	}
	for {
		select {
		case f, ok := <-s.C():
			if !ok { // detached
				closeSocket(ctx, conn, &wmu)
				return
			}
			if _, failed := f.(*messages.Error); failed {
				c.failures.Add(1)
			}
			if err := send(frameMessage(f)); err != nil {
				return
			}
			if messages.IsTerminal(f) {
				closeSocket(ctx, conn, &wmu)
				return
			}
		case <-ctx.Done():
			return // the page closed the socket (its close was answered) or it broke
		}
	}
}

// refuse ends a socket that will carry no stream with a close frame that
// says why (a page sees its code and reason, not an abnormal 1006).
func refuse(conn *websocket.Conn, code int, reason string) {
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(socketWriteWait))
}

// closeWait bounds the wait for the page to answer our close.
const closeWait = 5 * time.Second

// closeSocket ends the socket with a normal close once everything is sent,
// and waits until the page answers it (readClient ends, cancelling ctx): a
// connection dropped without the handshake reads as trouble in the page.
func closeSocket(ctx context.Context, conn *websocket.Conn, wmu *sync.Mutex) {
	wmu.Lock()
	err := conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""),
		time.Now().Add(socketWriteWait))
	wmu.Unlock()
	if err != nil {
		return
	}
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// viewStream is the stream of one view: a FrameStream, since the page shows the
// frames themselves, numbered, or draws them on a terminal screen.
type viewStream struct {
	*actors.FrameStream
	detachable bool          // the command outlives a detach and can be attached again
	screen     *termScreen   // a terminal's screen; nil = output shown as lines
	drawn      chan struct{} // the page drew a screen update
}

// open starts the stream the page's first message asks for: a run spawns
// (a terminal one sized to the page's output area), an attach joins a
// session (a terminal one on a fresh screen, which the replay draws).
func (c *console) open(ctx context.Context, m clientMessage) (*viewStream, error) {
	h := paddock.Handle{Provider: paddock.Provider(m.Provider), Name: m.Sandbox}
	a := c.rt.Adapter(h.Provider)
	var st paddock.Stream
	var err error
	v := &viewStream{}
	if m.TTY {
		if err := checkTermSize(m.Cols, m.Rows); err != nil {
			return nil, err
		}
	}
	// A terminal is the size the page asked for where the provider sizes
	// terminals, else 80x24; the screen is the same size.
	asked := paddock.TermSize{Cols: m.Cols, Rows: m.Rows}
	sized := m.TTY && paddock.Supports(a, paddock.CapResize) && m.Cols > 0 && m.Rows > 0
	switch m.Op {
	case "run":
		if len(m.Argv) == 0 {
			return nil, &paddock.InvalidError{Detail: "an empty command"}
		}
		cmd := paddock.NewCmd(m.Argv[0], m.Argv[1:]...)
		opts := paddock.SpawnOpts{Stdin: m.Stdin || m.TTY, TTY: m.TTY, Detachable: paddock.Supports(a, paddock.CapAttach)}
		if sized {
			opts.Size = &asked
		}
		st, err = a.Spawn(ctx, h, cmd, opts)
		var invalid *paddock.InvalidError
		if m.TTY && opts.Detachable && errors.As(err, &invalid) {
			// A provider that cannot re-attach a terminal refuses a
			// detachable one: it runs as long as this view.
			opts.Detachable = false
			st, err = a.Spawn(ctx, h, cmd, opts)
		}
		v.detachable = opts.Detachable
	case "attach":
		st, err = a.Attach(ctx, h, m.Session, paddock.AttachOpts{Stdin: true})
		v.detachable = true
	default:
		return nil, &paddock.InvalidError{Detail: "the first message must be run or attach"}
	}
	if err != nil {
		return nil, err
	}
	v.FrameStream = st.(*actors.FrameStream)
	if !m.TTY {
		return v, nil
	}
	size := paddock.TermSize{Cols: 80, Rows: 24}
	if sized {
		if m.Op == "attach" {
			// The program redraws at this view's size (a terminal that
			// keeps its size draws the replay as it was).
			if err := v.Resize(ctx, asked); err != nil {
				_ = v.Close()
				return nil, err
			}
		}
		size = asked
	}
	v.screen, v.drawn = newTermScreen(size.Cols, size.Rows, c.limits.scrollback), make(chan struct{}, 1)
	return v, nil
}

// streamScreen draws the view's output on its screen as it comes, and
// sends the page what changed whenever the page has drawn the last update
// it was sent (its "drawn"): a page that draws slowly gets fewer updates,
// each the screen as it is then, and never slows the command. A terminal
// frame is sent after the screen it ends on. The screen's answers to the
// program's queries go to its stdin when this view started it (an
// attached view's replay would answer old questions).
func (c *console) streamScreen(ctx context.Context, conn *websocket.Conn, wmu *sync.Mutex, v *viewStream, answers bool, send func(any) error) {
	var replies sync.WaitGroup
	replies.Go(func() {
		for r := range v.screen.Replies() {
			if answers {
				_ = v.WriteStdin(ctx, r)
			}
		}
	})
	defer replies.Wait()
	defer v.screen.Close()
	draw := func() error { return v.sendScreen(send) }
	inFlight, changed := false, true // the first update is the screen as it starts
	for {
		if changed && !inFlight {
			if err := draw(); err != nil {
				return
			}
			inFlight, changed = true, false
		}
		select {
		case <-v.drawn:
			inFlight = false
		case f, ok := <-v.C():
			if !ok { // detached
				_ = draw()
				closeSocket(ctx, conn, wmu)
				return
			}
			switch f := f.(type) {
			case *messages.Stdout:
				c.drawOn(v, f.GetData(), send)
			case *messages.Stderr:
				c.drawOn(v, f.GetData(), send)
			case *messages.Error:
				c.failures.Add(1)
			}
			if messages.IsTerminal(f) {
				if draw() == nil && send(frameMessage(f)) == nil {
					closeSocket(ctx, conn, wmu)
				}
				return
			}
			changed = true
		case <-ctx.Done():
			return
		}
	}
}

// drawOn draws output on v's screen.
func (c *console) drawOn(v *viewStream, data []byte, send func(any) error) {
	_, err := v.screen.Write(data)
	c.screenFailed(err, send)
}

// screenFailed tells the page (a note) and the log that a view's emulator
// failed and its screen started again; nil is nothing to tell.
func (c *console) screenFailed(err error, send func(any) error) {
	if err != nil {
		c.log.Warn().Err(err).Msg("console: a terminal view's screen")
		_ = send(serverMessage{Type: "note", Detail: err.Error()})
	}
}

// sendScreen sends the page what changed on v's screen.
func (v *viewStream) sendScreen(send func(any) error) error {
	return v.screen.Update(func(u screenUpdate) error { return send(u) })
}

// readClient carries out the page's stdin and detach requests until the
// socket ends (a detach ends the stream; the page then closes the socket).
func (c *console) readClient(ctx context.Context, conn *websocket.Conn, s *viewStream, send func(any) error, cancel func()) {
	defer cancel()
	for {
		var m clientMessage
		if err := conn.ReadJSON(&m); err != nil {
			return
		}
		var err error
		switch m.Op {
		case "stdin":
			err = s.WriteStdin(ctx, []byte(m.Data))
		case "close_stdin":
			err = s.CloseStdin(ctx)
		case "resize":
			if err = checkTermSize(m.Cols, m.Rows); err == nil {
				err = s.Resize(ctx, paddock.TermSize{Cols: m.Cols, Rows: m.Rows})
			}
			switch {
			case errors.Is(err, paddock.ErrNotSupported):
				err = nil // the provider keeps its terminals at one size, and so does the screen
			case err == nil && s.screen != nil:
				c.screenFailed(s.screen.Resize(m.Cols, m.Rows), send)
				err = s.sendScreen(send)
			}
		case "drawn":
			if s.drawn != nil {
				select {
				case s.drawn <- struct{}{}:
				default:
				}
			}
		case "detach":
			_ = s.Close()
		}
		if err != nil {
			c.failures.Add(1)
			_ = send(serverMessage{Type: "failed", Detail: err.Error()})
		}
	}
}

// frameMessage turns a frame into what the page shows.
func frameMessage(f messages.Frame) serverMessage {
	switch f := f.(type) {
	case *messages.Stdout:
		return serverMessage{Type: "stdout", Seq: f.GetSeq(), Data: string(f.GetData())}
	case *messages.Stderr:
		return serverMessage{Type: "stderr", Seq: f.GetSeq(), Data: string(f.GetData())}
	case *messages.Exit:
		return serverMessage{Type: "exit", Seq: f.GetSeq(), Code: f.GetCode(), OutputFrames: f.GetOutputFrames()}
	case *messages.Error:
		return serverMessage{Type: "error", Seq: f.GetSeq(), Reason: f.GetReason(), Detail: f.GetDetail(), OutputFrames: f.GetOutputFrames()}
	}
	return serverMessage{Type: "failed", Detail: "unknown frame"}
}
