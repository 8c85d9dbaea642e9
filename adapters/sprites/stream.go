package sprites

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/eventq"
)

// WebSocket timings.
const (
	pingInterval = 15 * time.Second
	pongWait     = 45 * time.Second // must exceed the ping interval
	writeWait    = 10 * time.Second
	readAhead    = 64 // events read ahead of Next: bounded, so the socket backs up
)

// keepalive is how often a stream pings, and how long it waits for any
// frame (a pong included) before it gives the socket up.
type keepalive struct {
	ping, wait time.Duration
}

// silentTicks is how many of the pinger's ticks in a row may pass with
// the reader waiting on the socket and no frame arriving before the
// socket is given up: the wait, counted in ticks the pinger saw. A
// process starved of the CPU sees few ticks however long it stalls, so a
// stall (of the machine, or of this process) is never taken for a socket
// gone silent, as a read deadline would take it: one that expires while
// the reader waits to be scheduled fails the read, data pending or not.
func (k keepalive) silentTicks() int { return max(int((k.wait+k.ping-1)/k.ping), 1) }

// stream is one command subscription over its WebSocket. A reader goroutine
// decodes frames into a bounded channel and ends with the terminal event:
// the exit, or closed_before_exit when the socket ends first (an exit
// already read always wins, being read first).
type stream struct {
	conn      *websocket.Conn
	tty       bool
	sessionID string
	keep      keepalive
	a         *Adapter     // for the HTTP signal fallback
	sprite    string       // the sprite's name
	caps      capabilities // from the upgrade

	q       *eventq.Queue    // closed by Close
	info    chan sessionInfo // the session info, once
	ended   chan struct{}    // closed when the reader returns
	stopped sync.WaitGroup   // the reader and the pinger

	wmu    sync.Mutex
	exited atomic.Bool // the terminal event was read

	frames  atomic.Uint64 // frames read so far, pongs included
	waiting atomic.Bool   // the reader waits on the socket (not on the consumer)

	// restored reports whether a restore of the sprite began since the
	// command started (nil: never); a command that ends then was ended
	// by it.
	restored func() bool
}

var _ paddock.Stream = (*stream)(nil)

func newStream(conn *websocket.Conn, tty bool, keep keepalive, restored func() bool) *stream {
	st := &stream{conn: conn, tty: tty, keep: keep, q: eventq.New(readAhead),
		info: make(chan sessionInfo, 1), ended: make(chan struct{}), restored: restored}
	conn.SetPongHandler(func(string) error { st.frames.Add(1); return nil })
	st.stopped.Add(2)
	go st.read(tty)
	go st.ping()
	return st
}

// read is the reader goroutine.
func (st *stream) read(tty bool) {
	defer st.stopped.Done()
	defer close(st.ended)
	dec := frameDecoder{tty: tty}
	infoSent := false
	for {
		// Only time spent waiting on the socket counts: while Emit waits
		// for a slow consumer, the socket is not read, and not silent.
		st.waiting.Store(true)
		kind, data, err := st.conn.ReadMessage()
		st.waiting.Store(false)
		st.frames.Add(1)
		if err != nil {
			if !st.exited.Swap(true) { // set before the consumer can see the end
				st.q.Emit(st.why(paddock.Failed(&paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit})))
			}
			return
		}
		events, info := dec.decode(kind, data)
		if info != nil && !infoSent {
			infoSent = true
			st.info <- *info
		}
		for _, ev := range events {
			if ev.Kind.Terminal() {
				st.exited.Store(true)
				ev = st.why(ev)
			}
			if !st.q.Emit(ev) {
				return
			}
			if ev.Kind.Terminal() {
				// Done: the server holds the socket a while; we do not wait.
				_ = st.conn.Close()
				return
			}
		}
	}
}

// why is a terminal event as the subscriber gets it: the sprite's restore
// ends every session, so a command that ends once one began (an exit from
// its kill, or the socket closing) is unavailable(checkpoint_restored).
func (st *stream) why(ev paddock.Event) paddock.Event {
	if st.restored != nil && st.restored() {
		return paddock.Failed(&paddock.UnavailableError{Detail: paddock.DetailCheckpointRestored})
	}
	return ev
}

// ping keeps the connection alive, and gives it up (closing it, so the
// reader ends closed_before_exit) once keepalive.silentTicks ticks in a
// row found the reader waiting on the socket and no frame come.
func (st *stream) ping() {
	defer st.stopped.Done()
	t := time.NewTicker(st.keep.ping)
	defer t.Stop()
	seen, silent := st.frames.Load(), 0
	for {
		select {
		case <-t.C:
			if n := st.frames.Load(); n != seen || !st.waiting.Load() {
				seen, silent = n, 0
			} else if silent++; silent >= st.keep.silentTicks() {
				_ = st.conn.Close()
				return
			}
			st.wmu.Lock()
			err := st.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait))
			st.wmu.Unlock()
			if err != nil {
				return
			}
		case <-st.q.Done():
			return
		case <-st.ended:
			return // the socket is finished: nothing to keep alive
		}
	}
}

// awaitInfo waits for the session info the server sends first. It never
// takes an event: the reader hands over the info before any event decoded
// with or after it, so only a reader that ended without one is looked at.
func (st *stream) awaitInfo(ctx context.Context, timeout time.Duration) (sessionInfo, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case info := <-st.info:
		return info, nil
	case <-st.ended:
		select {
		case info := <-st.info:
			return info, nil
		default:
		}
		// The socket ended (or the command exited) before the session
		// info: no session to return.
		ev, ok := st.q.TryNext()
		switch {
		case !ok:
			return sessionInfo{}, &paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit}
		case ev.Kind == paddock.EventError:
			return sessionInfo{}, ev.Err
		}
		return sessionInfo{}, &paddock.ProviderError{Provider: paddock.ProviderSprites, Detail: "the command ended before session_info"}
	case <-t.C:
		return sessionInfo{}, &paddock.UnavailableError{Detail: paddock.DetailStartTimeout}
	case <-ctx.Done():
		return sessionInfo{}, &paddock.UnavailableError{Detail: paddock.DetailStartTimeout}
	}
}

// Next returns the next event; io.EOF after the terminal event or Close.
func (st *stream) Next(ctx context.Context) (paddock.Event, error) { return st.q.Next(ctx) }

// WriteStdin sends p: prefixed with the stdin stream id, or raw in tty mode.
func (st *stream) WriteStdin(ctx context.Context, p []byte) error {
	frame := p
	if !st.tty {
		frame = append([]byte{streamStdin}, p...)
	}
	return st.write(ctx, frame)
}

// CloseStdin sends the end of stdin (the EOF frame; Ctrl-D in tty mode). It
// is ok after the exit.
func (st *stream) CloseStdin(ctx context.Context) error {
	if st.exited.Load() && !st.q.Closed() {
		return nil
	}
	frame := []byte{streamStdinEOF}
	if st.tty {
		frame = []byte{0x04}
	}
	return st.write(ctx, frame)
}

func (st *stream) write(ctx context.Context, frame []byte) error {
	return st.send(ctx, websocket.BinaryMessage, frame)
}

// send writes one message, in order with every other.
func (st *stream) send(ctx context.Context, kind int, frame []byte) error {
	if st.q.Closed() || st.exited.Load() {
		return paddock.ErrCommandExited
	}
	st.wmu.Lock()
	defer st.wmu.Unlock()
	deadline := time.Now().Add(writeWait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = st.conn.SetWriteDeadline(deadline)
	if err := st.conn.WriteMessage(kind, frame); err != nil {
		if st.exited.Load() || st.q.Closed() {
			return paddock.ErrCommandExited
		}
		return &paddock.WriteFailedError{Detail: "websocket write: " + err.Error()}
	}
	return nil
}

// Signal delivers sig to the session's process group: as a signal
// message on the socket when the server listed the signal capability,
// otherwise through the kill endpoint with a zero timeout (the signal
// alone, no escalation), as Sprites' own client does.
func (st *stream) Signal(ctx context.Context, sig paddock.Signal) error {
	if err := sig.Deliverable(st.q.Closed() || st.exited.Load()); err != nil {
		return err
	}
	if st.caps["signal"] {
		msg, _ := json.Marshal(controlMessage{Type: "signal", Signal: string(sig)})
		return st.send(ctx, websocket.TextMessage, msg)
	}
	return st.a.signalSession(ctx, st.sprite, st.sessionID, sig)
}

// Resize sets a TTY session's terminal size (the resize message).
func (st *stream) Resize(ctx context.Context, size paddock.TermSize) error {
	if err := size.Validate(); err != nil {
		return err
	}
	if !st.tty && !st.q.Closed() && !st.exited.Load() {
		return &paddock.InvalidError{Detail: paddock.DetailTermSize + ": the command has no terminal"}
	}
	msg, _ := json.Marshal(controlMessage{Type: "resize", Cols: size.Cols, Rows: size.Rows})
	return st.send(ctx, websocket.TextMessage, msg)
}

// controlMessage is a text message to the server.
type controlMessage struct {
	Type   string `json:"type"`
	Cols   int    `json:"cols,omitempty"`
	Rows   int    `json:"rows,omitempty"`
	Signal string `json:"signal,omitempty"`
}

// Close detaches: the socket closes, the remote command keeps running for
// its max_run_after_disconnect.
func (st *stream) Close() error {
	if st.q.Close() {
		_ = st.conn.Close()
		st.stopped.Wait()
	}
	return nil
}

// SessionID is the provider's session id.
func (st *stream) SessionID() string { return st.sessionID }

// Spawn starts cmd as a detachable session (it runs on after a local Close
// for MaxRunAfterDisconnect; 0 = until it ends) and returns once the
// session exists. Named spawn is not offered.
func (a *Adapter) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts) (paddock.Stream, error) {
	if err := paddock.ValidateSpawn(a, cmd, opts); err != nil {
		return nil, err // a named spawn among them: Sprites does not offer it
	}
	return a.start(ctx, h.Name, spritePath(h.Name, "exec"), execQuery(cmd, opts.TTY, opts.Stdin, opts.Size, a.cfg.MaxRunAfterDisconnect), opts.TTY)
}
