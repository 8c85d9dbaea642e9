package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
)

// Reasons of the terminal errors an owner proxy decides itself.
const (
	// ReasonNodeLost: the serving node was silent for three quarters of a
	// lease; the command's fate is unknown.
	ReasonNodeLost = "node_lost"
	// ReasonFramesLost: the link lost frames of a command that is not a
	// session, so nothing can replay them.
	ReasonFramesLost = "frames_lost"
)

// Spawn starts cmd on the serving node, its frames owned by a proxy on
// this node.
func (a *Adapter) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts) (paddock.Stream, error) {
	return a.open(ctx, &messages.SpawnRequest{Handle: a.handle(h), Cmd: wire.CmdMessage(cmd), Stdin: opts.Stdin, Tty: opts.TTY,
		Detachable: opts.Detachable, SessionName: opts.Name, Size: wire.TermSizeMessage(opts.Size), Window: uint32(a.cfg.Window)}, a.handle(h), "", opts.Stdin)
}

// Attach rejoins a session on the serving node, its frames owned by a
// proxy on this node.
func (a *Adapter) Attach(ctx context.Context, h paddock.Handle, sessionID string, opts paddock.AttachOpts) (paddock.Stream, error) {
	return a.open(ctx, &messages.AttachRequest{Handle: a.handle(h), SessionId: sessionID, Stdin: opts.Stdin, Window: uint32(a.cfg.Window)},
		a.handle(h), sessionID, opts.Stdin)
}

// open starts an owner proxy that sends req (a spawn or an attach) and
// waits for its reply.
func (a *Adapter) open(ctx context.Context, req proto.Message, h *messages.Handle, session string, stdin bool) (paddock.Stream, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.cfg.Timeout)
		defer cancel()
	}
	s := &proxyStream{a: a, wake: make(chan struct{}, 1), refSet: make(chan struct{})}
	p := &proxy{a: a, s: s, h: h, open: req, session: session, stdin: stdin, ready: make(chan error, 1)}
	s.pid = a.n.Engine.Spawn(func() actor.Receiver { return p }, "paddock-remote-stream", actor.WithID(a.newID()))
	select {
	case err := <-p.ready:
		if err != nil {
			return nil, err
		}
		s.sessionID = p.session
		return s, nil
	case <-ctx.Done():
		a.n.Engine.Send(s.pid, closeProxy{})
		return nil, fmt.Errorf("%w: %w", &paddock.UnavailableError{Detail: "remote: no reply from " + a.cfg.Peer}, ctx.Err())
	}
}

// Messages of a proxy's own.
type (
	consumed   struct{ ref string } // the stream handed out an output event of ref
	closeProxy struct{}             // the stream was closed
	proxyTick  struct{}             // a tenth of a lease passed
)

// The states of a proxy.
const (
	opening   = iota // the spawn or attach is on its way
	live             // frames of ref arrive
	attaching        // re-attaching after a loss
	done             // the terminal event is out, or the stream closed
)

// proxy owns one subscription on the serving node for a stream of this
// node. Every frame it accepts is the next of its subscription; a gap, a
// beat naming a frame that never came, a terminal frame whose output count
// disagrees, or a long silence makes it re-attach, asking the serving node
// to leave out the bytes already delivered, and it drops whatever of them
// still comes; so the stream sees every byte once and one terminal event.
type proxy struct {
	a     *Adapter
	s     *proxyStream
	h     *messages.Handle
	open  proto.Message
	stdin bool
	ready chan error // the opening's outcome, once

	self   *actor.PID
	beats  actor.SendRepeater
	state  int
	ref    string     // the subscription frames are accepted from
	cmd    *actor.PID // its command actor, which takes credits
	openID string     // the id of the spawn or attach awaited
	sentAt time.Time  // when it was sent

	session   string
	expect    uint64    // the next seq of ref
	outputs   uint64    // output frames of ref so far
	delivered [2]uint64 // stdout and stderr bytes handed to the stream
	dedup     [2]uint64 // bytes of ref's streams that were delivered already
	owed      int       // output events of ref handed out and not credited
	heard     time.Time // the serving node's last word
	ticks     int
	probed    bool // re-attached for a silence since the last word
}

func (p *proxy) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		p.self = c.PID()
		p.heard = time.Now()
		p.beats = c.Engine().SendRepeat(p.self, proxyTick{}, p.a.cfg.Lease/10)
		p.send(c, p.open)
	case actor.Stopped:
		p.beats.Stop()
	case *messages.SpawnReply:
		p.opened(c, m.GetId(), m.GetFailure(), m.GetCommand(), m.GetSessionId(), 0, 0)
	case *messages.AttachReply:
		p.opened(c, m.GetId(), m.GetFailure(), m.GetCommand(), "", m.GetSkippedStdout(), m.GetSkippedStderr())
	case messages.Frame:
		p.frame(c, m)
	case *messages.Beat:
		p.hear(c, m.GetRef())
		if m.GetRef() == p.ref && p.state == live && m.GetLastSeq() >= p.expect {
			p.reattach(c, "a beat names a frame that never came")
		}
	case consumed:
		p.consumed(c, m.ref)
	case proxyTick:
		p.tick(c)
	case closeProxy:
		if p.ref != "" && p.state != done {
			p.stop(c, p.ref)
		}
		p.finish(c)
	}
}

// send sends a request to the serving runtime with the proxy as sender;
// a spawn or attach becomes the one awaited.
func (p *proxy) send(c *actor.Context, q proto.Message) {
	id := p.a.newID()
	setID(q, id)
	switch q := q.(type) {
	case *messages.SpawnRequest:
		q.Owner = messages.PidOf(p.self)
		p.openID, p.sentAt = id, time.Now()
	case *messages.AttachRequest:
		q.Owner = messages.PidOf(p.self)
		p.openID, p.sentAt = id, time.Now()
	}
	c.Engine().SendWithSender(p.a.root, q, p.self)
}

// stop detaches subscription ref on the serving node.
func (p *proxy) stop(c *actor.Context, ref string) {
	p.send(c, &messages.StopCommandRequest{Command: &messages.CommandRef{Provider: string(p.a.cfg.Provider), Ref: ref}})
}

// hear notes a word from the serving node; one of the subscription's
// command names the actor that takes its credits.
func (p *proxy) hear(c *actor.Context, ref string) {
	p.heard, p.probed = time.Now(), false
	if s := c.Sender(); s != nil && p.state == live && ref == p.ref {
		p.cmd = s
	}
}

// opened handles the reply to the spawn or attach awaited.
func (p *proxy) opened(c *actor.Context, id string, f *messages.Failure, cmd *messages.CommandRef, session string, skipOut, skipErr uint64) {
	if id != p.openID || (p.state != opening && p.state != attaching) {
		return // an attempt given up on
	}
	p.heard = time.Now()
	if err := errorOf(f); err != nil {
		if p.state == attaching && paddock.IsTransient(err) {
			return // the next tick tries again
		}
		p.end(c, err)
		return
	}
	if p.state == opening && session != "" {
		p.session = session
	}
	p.ref, p.cmd, p.expect, p.outputs, p.owed = cmd.GetRef(), nil, 1, 0, 0
	p.dedup = [2]uint64{p.delivered[0] - min(skipOut, p.delivered[0]), p.delivered[1] - min(skipErr, p.delivered[1])}
	first := p.state == opening
	p.state = live
	p.s.setRef(p.ref)
	if first {
		p.ready <- nil
	}
}

// frame accepts the next frame of the subscription.
func (p *proxy) frame(c *actor.Context, f messages.Frame) {
	p.hear(c, f.GetRef())
	if f.GetRef() != p.ref || p.state != live {
		return // of a subscription given up on
	}
	switch seq := f.GetSeq(); {
	case seq < p.expect:
		return
	case seq > p.expect:
		p.reattach(c, "a gap in seq")
		return
	}
	p.expect++
	ev := wire.EventOf(f)
	switch ev.Kind {
	case paddock.EventStdout, paddock.EventStderr:
		p.outputs++
		i := 0
		if ev.Kind == paddock.EventStderr {
			i = 1
		}
		cut := min(p.dedup[i], uint64(len(ev.Data)))
		p.dedup[i] -= cut
		ev.Data = ev.Data[cut:]
		if len(ev.Data) == 0 {
			p.consumed(c, p.ref) // nothing to hand out: consumed at once
			return
		}
		p.delivered[i] += uint64(len(ev.Data))
		p.s.push(ev, p.ref)
	case paddock.EventExit, paddock.EventError:
		if outputs := terminalOutputs(f); outputs != p.outputs {
			p.reattach(c, "the terminal frame counts other output")
			return
		}
		p.s.push(ev, p.ref)
		p.state = done
		c.Engine().Poison(p.self)
	default: // a watch's change: not carried
		p.outputs++
		p.consumed(c, p.ref)
	}
}

func terminalOutputs(f messages.Frame) uint64 {
	switch f := f.(type) {
	case *messages.Exit:
		return f.GetOutputFrames()
	case *messages.Error:
		return f.GetOutputFrames()
	}
	return 0
}

// reattach gives the subscription up and attaches to its session again,
// leaving out what was delivered; a command that is not a session ends
// with frames_lost.
func (p *proxy) reattach(c *actor.Context, why string) {
	p.a.n.log.Debug().Str("ref", p.ref).Str("why", why).Msg("remote: re-attaching")
	if p.ref != "" {
		p.stop(c, p.ref)
	}
	if p.session == "" {
		p.end(c, &paddock.UnavailableError{Detail: ReasonFramesLost})
		return
	}
	p.state, p.ref, p.cmd = attaching, "", nil
	p.s.setRef("")
	p.send(c, &messages.AttachRequest{Handle: p.h, SessionId: p.session, Stdin: p.stdin, Window: uint32(p.a.cfg.Window),
		SkipStdout: p.delivered[0], SkipStderr: p.delivered[1]})
}

// consumed credits the command for output events of ref the stream
// handed out, half a window at a time.
func (p *proxy) consumed(c *actor.Context, ref string) {
	if ref != p.ref || p.state != live {
		return
	}
	if p.owed++; p.owed >= max(p.a.cfg.Window/2, 1) && p.cmd != nil {
		c.Send(p.cmd, &messages.Credit{Ref: p.ref, N: uint32(p.owed)})
		p.owed = 0
	}
}

// tick ends the stream with node_lost after three quarters of a lease of
// silence, re-attaches after half a lease of it (or when an attach went
// unanswered for a quarter), and renews the command's lease every fifth.
func (p *proxy) tick(c *actor.Context) {
	if p.state == done {
		return
	}
	lease, silent := p.a.cfg.Lease, time.Since(p.heard)
	switch {
	case silent > lease*3/4:
		p.end(c, &paddock.UnavailableError{Detail: ReasonNodeLost})
		return
	case p.state == attaching && time.Since(p.sentAt) > lease/4:
		p.state = live // as if live, to re-attach again
		p.reattach(c, "an attach went unanswered")
	case p.state == live && silent > lease/2 && !p.probed:
		p.probed = true
		p.reattach(c, "silence")
	}
	if p.ticks++; p.ticks%2 == 0 && p.state == live && p.cmd != nil {
		c.Send(p.cmd, &messages.Credit{Ref: p.ref, N: 0})
	}
}

// end hands the stream its terminal error, or the opener its failure, and
// stops.
func (p *proxy) end(c *actor.Context, err error) {
	if p.state == opening {
		p.ready <- err
	} else if p.state != done {
		p.s.push(paddock.Failed(err), p.ref)
	}
	p.finish(c)
}

// finish stops the proxy.
func (p *proxy) finish(c *actor.Context) {
	p.state = done
	p.s.setRef("")
	c.Engine().Poison(p.self)
}

// proxyStream is the stream a proxy feeds.
type proxyStream struct {
	a         *Adapter
	pid       *actor.PID
	sessionID string

	mu     sync.Mutex
	events []proxied
	wake   chan struct{}
	ended  bool // the terminal event is queued
	closed bool
	eof    bool // the terminal event was handed out
	ref    string
	refSet chan struct{} // closed when ref is set or the stream ends

	closeOnce sync.Once
}

type proxied struct {
	ev  paddock.Event
	ref string
}

var (
	_ paddock.Signaller = (*proxyStream)(nil)
	_ paddock.Resizer   = (*proxyStream)(nil)
)

func (s *proxyStream) push(ev paddock.Event, ref string) {
	s.mu.Lock()
	if s.closed || s.ended {
		s.mu.Unlock()
		return
	}
	s.events = append(s.events, proxied{ev, ref})
	if ev.Kind.Terminal() {
		s.ended = true
		s.release()
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// setRef records the subscription stdin goes to ("" while re-attaching).
func (s *proxyStream) setRef(ref string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.closed {
		return
	}
	s.ref = ref
	select {
	case <-s.refSet:
		if ref == "" {
			s.refSet = make(chan struct{})
		}
	default:
		if ref != "" {
			close(s.refSet)
		}
	}
}

// release wakes whoever waits for a subscription: the stream is over.
// The caller holds mu.
func (s *proxyStream) release() {
	select {
	case <-s.refSet:
	default:
		close(s.refSet)
	}
}

// Next returns the next event, io.EOF after the terminal one or a Close.
func (s *proxyStream) Next(ctx context.Context) (paddock.Event, error) {
	for {
		s.mu.Lock()
		if s.closed || s.eof {
			s.mu.Unlock()
			return paddock.Event{}, io.EOF
		}
		if len(s.events) > 0 {
			e := s.events[0]
			s.events[0] = proxied{}
			s.events = s.events[1:]
			if e.ev.Kind.Terminal() {
				s.eof = true
			}
			s.mu.Unlock()
			if !e.ev.Kind.Terminal() {
				s.a.n.Engine.Send(s.pid, consumed{e.ref})
			}
			return e.ev, nil
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-ctx.Done():
			return paddock.Event{}, ctx.Err()
		}
	}
}

// current waits for the subscription stdin goes to; "" once the stream
// ended.
func (s *proxyStream) current(ctx context.Context) (string, error) {
	for {
		s.mu.Lock()
		ref, set, over := s.ref, s.refSet, s.ended || s.closed
		s.mu.Unlock()
		if over {
			return "", paddock.ErrCommandExited
		}
		if ref != "" {
			return ref, nil
		}
		select {
		case <-set:
		case <-ctx.Done():
			return "", fmt.Errorf("%w: %w", &paddock.WriteFailedError{Detail: "remote: re-attaching"}, ctx.Err())
		}
	}
}

// stdinCall sends one stdin-side request for the current subscription;
// any failure but command_exited is write_failed.
func stdinCall[R failing](ctx context.Context, s *proxyStream, q func(*messages.CommandRef) proto.Message) error {
	ref, err := s.current(ctx)
	if err != nil {
		return err
	}
	_, err = call[R](ctx, s.a, q(&messages.CommandRef{Provider: string(s.a.cfg.Provider), Ref: ref}))
	switch {
	case err == nil || errors.Is(err, paddock.ErrCommandExited) || errors.Is(err, paddock.ErrWriteFailed) ||
		errors.Is(err, paddock.ErrInvalid) || errors.Is(err, paddock.ErrNotSupported):
		return err
	case ctx.Err() != nil: // ended by the caller (the runtime ends it when the command exits)
		return fmt.Errorf("%w: %w", &paddock.WriteFailedError{Detail: "remote: no reply from " + s.a.cfg.Peer}, ctx.Err())
	}
	return &paddock.WriteFailedError{Detail: err.Error()}
}

func (s *proxyStream) WriteStdin(ctx context.Context, p []byte) error {
	return stdinCall[*messages.WriteStdinReply](ctx, s, func(c *messages.CommandRef) proto.Message {
		return &messages.WriteStdinRequest{Command: c, Data: p}
	})
}

func (s *proxyStream) CloseStdin(ctx context.Context) error {
	return stdinCall[*messages.CloseStdinReply](ctx, s, func(c *messages.CommandRef) proto.Message {
		return &messages.CloseStdinRequest{Command: c}
	})
}

func (s *proxyStream) Signal(ctx context.Context, sig paddock.Signal) error {
	return stdinCall[*messages.SignalReply](ctx, s, func(c *messages.CommandRef) proto.Message {
		return &messages.SignalRequest{Command: c, Signal: string(sig)}
	})
}

func (s *proxyStream) Resize(ctx context.Context, size paddock.TermSize) error {
	return stdinCall[*messages.ResizeReply](ctx, s, func(c *messages.CommandRef) proto.Message {
		return &messages.ResizeRequest{Command: c, Size: wire.TermSizeMessage(&size)}
	})
}

// Close detaches: the serving node's subscription stops, the command keeps
// running, and Next returns io.EOF.
func (s *proxyStream) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.events = nil
		s.release()
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
		s.a.n.Engine.Send(s.pid, closeProxy{})
	})
	return nil
}

// SessionID is the session the spawn started or the attach joined.
func (s *proxyStream) SessionID() string { return s.sessionID }
