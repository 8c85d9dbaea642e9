package remote

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/pending"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
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

// Open starts an owner proxy that sends q (a spawn, an attach or a watch)
// and waits for its reply.
func (t *transport) Open(ctx context.Context, q client.Request) (paddock.Stream, client.Reply, error) {
	t.serving(q)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.cfg.Timeout)
		defer cancel()
	}
	s := &proxyStream{t: t, refSet: make(chan struct{}), events: pending.New(func(p proxied) bool { return p.ev.Kind.Terminal() })}
	s.Controls = client.Controls{T: t, Ref: s.current}
	p := &proxy{t: t, s: s, open: q, ready: make(chan openResult, 1)}
	switch q := q.(type) {
	case *messages.SpawnRequest:
		p.h, p.stdin = q.GetHandle(), q.GetStdin()
		q.Window = uint32(t.cfg.Window)
	case *messages.AttachRequest:
		p.h, p.stdin, p.session = q.GetHandle(), q.GetStdin(), q.GetSessionId()
		q.Window = uint32(t.cfg.Window)
	case *messages.WatchRequest:
		p.h = q.GetHandle()
		q.Window = uint32(t.cfg.Window)
	}
	s.pid = t.n.Engine.Spawn(func() actor.Receiver { return p }, "paddock-remote-stream", actor.WithID(t.newID()))
	select {
	case o := <-p.ready:
		if o.err != nil || o.reply.GetFailure() != nil {
			return nil, o.reply, o.err
		}
		s.sessionID = p.session
		return s, o.reply, nil
	case <-ctx.Done():
		t.n.Engine.Send(s.pid, closeProxy{})
		return nil, nil, fmt.Errorf("%w: %w", &paddock.UnavailableError{Detail: "remote: no reply from " + t.cfg.Peer}, ctx.Err())
	}
}

// openResult is how the opening of a proxy's stream ended: its reply, or an
// error of the proxy's own.
type openResult struct {
	reply client.Reply
	err   error
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
	t     *transport
	s     *proxyStream
	h     *messages.Handle
	open  proto.Message
	stdin bool
	ready chan openResult // the opening's outcome, once

	self   *actor.PID
	beats  actor.SendRepeater
	state  int
	ref    string     // the subscription frames are accepted from
	cmd    *actor.PID // its command actor, which takes credits
	openID string     // the id of the spawn or attach awaited
	sentAt time.Time  // when it was sent

	session   string
	early     []heldFrame // frames that came while opening, before the reply named their ref
	expect    uint64      // the next seq of ref
	outputs   uint64      // output frames of ref so far
	delivered [2]uint64   // stdout and stderr bytes handed to the stream
	dedup     [2]uint64   // bytes of ref's streams that were delivered already
	owed      int         // output events of ref handed out and not credited
	heard     time.Time   // the serving node's last word
	ticks     int
	probed    bool // re-attached for a silence since the last word
}

func (p *proxy) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		p.self = c.PID()
		p.heard = time.Now()
		p.beats = c.Engine().SendRepeat(p.self, proxyTick{}, p.t.cfg.Lease/10)
		p.send(c, p.open)
	case actor.Stopped:
		p.beats.Stop()
	case *messages.SpawnReply:
		p.opened(c, m, m.GetCommand(), m.GetSessionId(), 0, 0)
	case *messages.AttachReply:
		p.opened(c, m, m.GetCommand(), "", m.GetSkippedStdout(), m.GetSkippedStderr())
	case *messages.WatchReply:
		p.opened(c, m, m.GetCommand(), "", 0, 0)
	case messages.Frame:
		p.frame(c, m, c.Sender())
	case *messages.Beat:
		p.hear(c.Sender(), m.GetRef())
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
	id := p.t.newID()
	setField(q, "id", protoreflect.ValueOfString(id))
	switch q := q.(type) {
	case *messages.SpawnRequest:
		q.Owner = messages.PidOf(p.self)
		p.openID, p.sentAt = id, time.Now()
	case *messages.AttachRequest:
		q.Owner = messages.PidOf(p.self)
		p.openID, p.sentAt = id, time.Now()
	case *messages.WatchRequest:
		q.Owner = messages.PidOf(p.self)
		p.openID, p.sentAt = id, time.Now()
	}
	c.Engine().SendWithSender(p.t.root, q, p.self)
}

// stop detaches subscription ref on the serving node.
func (p *proxy) stop(c *actor.Context, ref string) {
	p.send(c, &messages.StopCommandRequest{Command: &messages.CommandRef{Provider: string(p.t.cfg.Provider), Ref: ref}})
}

// hear notes a word from the serving node; one of the subscription's
// command (sender) names the actor that takes its credits.
func (p *proxy) hear(sender *actor.PID, ref string) {
	p.heard, p.probed = time.Now(), false
	if sender != nil && p.state == live && ref == p.ref {
		p.cmd = sender
	}
}

// opened handles the reply to the spawn, attach or watch awaited.
func (p *proxy) opened(c *actor.Context, r client.Reply, cmd *messages.CommandRef, session string, skipOut, skipErr uint64) {
	if r.(client.Request).GetId() != p.openID || (p.state != opening && p.state != attaching) {
		return // an attempt given up on
	}
	p.heard = time.Now()
	if err := wire.ErrorOf(r.GetFailure()); err != nil {
		switch {
		case p.state == opening:
			p.ready <- openResult{reply: r}
			p.finish(c)
		case paddock.IsTransient(err): // the next tick tries again
		default:
			p.end(c, err)
		}
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
		p.ready <- openResult{reply: r}
	}
	early := p.early
	p.early = nil
	for _, h := range early {
		p.frame(c, h.f, h.sender)
	}
}

// heldFrame is a frame that came before the reply that names its ref, and
// the command actor that sent it.
type heldFrame struct {
	f      messages.Frame
	sender *actor.PID
}

// frame accepts the next frame of the subscription, from its command
// actor (sender). While opening, the frames of the subscription being
// opened (the proxy is the owner of no other) are held until the reply
// names their ref, up to a window of output and the terminal frame: the
// reply may be lost and come again, after them.
func (p *proxy) frame(c *actor.Context, f messages.Frame, sender *actor.PID) {
	p.hear(sender, f.GetRef())
	if p.state == opening && len(p.early) <= p.t.cfg.Window {
		p.early = append(p.early, heldFrame{f, sender})
		return
	}
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
	default: // a watch's change
		p.outputs++
		p.s.push(ev, p.ref)
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
	p.t.n.log.Debug().Str("ref", p.ref).Str("why", why).Msg("remote: re-attaching")
	if p.ref != "" {
		p.stop(c, p.ref)
	}
	if p.session == "" {
		p.end(c, &paddock.UnavailableError{Detail: ReasonFramesLost})
		return
	}
	p.state, p.ref, p.cmd = attaching, "", nil
	p.s.setRef("")
	p.send(c, &messages.AttachRequest{Handle: p.h, SessionId: p.session, Stdin: p.stdin, Window: uint32(p.t.cfg.Window),
		SkipStdout: p.delivered[0], SkipStderr: p.delivered[1]})
}

// consumed credits the command for output events of ref the stream
// handed out, half a window at a time.
func (p *proxy) consumed(c *actor.Context, ref string) {
	if ref != p.ref || p.state != live {
		return
	}
	if p.owed++; p.owed >= max(p.t.cfg.Window/2, 1) && p.cmd != nil {
		c.Send(p.cmd, &messages.Credit{Ref: p.ref, N: uint32(p.owed)})
		p.owed = 0
	}
}

// tick ends the stream with node_lost after three quarters of a lease of
// silence, sends the opening request again when it went unanswered for a
// quarter of one, re-attaches after half a lease of silence (or when an
// attach went unanswered for a quarter), and renews the command's lease
// every fifth.
func (p *proxy) tick(c *actor.Context) {
	if p.state == done {
		return
	}
	lease, silent := p.t.cfg.Lease, time.Since(p.heard)
	switch {
	case silent > lease*3/4:
		p.end(c, &paddock.UnavailableError{Detail: ReasonNodeLost})
		return
	case p.state == opening && time.Since(p.sentAt) > lease/4:
		p.sentAt = time.Now() // the same request again: the serving runtime opens it once
		c.Engine().SendWithSender(p.t.root, p.open, p.self)
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
		p.ready <- openResult{err: err}
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
	client.Controls // stdin, signals and resizes of the current subscription
	t               *transport
	pid             *actor.PID
	sessionID       string

	events *pending.Queue[proxied] // what the proxy accepted, credited as the reader takes it

	mu     sync.Mutex
	ended  bool // the terminal event is queued
	closed bool
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
	s.events.Push(proxied{ev, ref})
	if ev.Kind.Terminal() {
		s.ended = true
		s.release()
	}
	s.mu.Unlock()
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

// Next returns the next event, io.EOF after the terminal one or a Close;
// taking an output event credits its command.
func (s *proxyStream) Next(ctx context.Context) (paddock.Event, error) {
	e, err := s.events.Next(ctx)
	if err != nil {
		return paddock.Event{}, err
	}
	if !e.ev.Kind.Terminal() {
		s.t.n.Engine.Send(s.pid, consumed{e.ref})
	}
	return e.ev, nil
}

// current waits for the subscription stdin goes to; ErrCommandExited once
// the stream ended.
func (s *proxyStream) current(ctx context.Context) (*messages.CommandRef, error) {
	for {
		s.mu.Lock()
		ref, set, over := s.ref, s.refSet, s.ended || s.closed
		s.mu.Unlock()
		if over {
			return nil, paddock.ErrCommandExited
		}
		if ref != "" {
			return &messages.CommandRef{Provider: string(s.t.cfg.Provider), Ref: ref}, nil
		}
		select {
		case <-set:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", &paddock.WriteFailedError{Detail: "remote: re-attaching"}, ctx.Err())
		}
	}
}

// Close detaches: the serving node's subscription stops, the command keeps
// running, and Next returns io.EOF.
func (s *proxyStream) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.release()
		s.mu.Unlock()
		s.events.Close()
		s.t.n.Engine.Send(s.pid, closeProxy{})
	})
	return nil
}

// SessionID is the session the spawn started or the attach joined.
func (s *proxyStream) SessionID() string { return s.sessionID }
