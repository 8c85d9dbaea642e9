package actors

import (
	"context"
	"errors"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/telemetry"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"github.com/paddockhq/paddock/supervisor"
	"google.golang.org/protobuf/proto"
)

// commandActor owns one subscription: the adapter's stream, the reader
// goroutine over it (and a writer goroutine while stdin is being written),
// and the outlet its frames leave by. Frames reach the owner in order, with
// seq from 1 and exactly one terminal frame after all output. The reader
// makes at most window reads its owner has not credited, so a slow owner
// costs bounded memory. The actor itself handles credits, stdin, detaching
// and stopping; output never passes through its inbox.
type commandActor struct {
	rt       *Runtime
	ref      paddock.Ref
	provider paddock.Provider
	stream   paddock.Stream
	window   int
	out      *outlet
	meter    *telemetry.Stream // nil without metrics

	self, root *actor.PID
	ctx        context.Context
	cancel     context.CancelFunc
	permits    *permits // the stream reads the reader may make

	skip   [2]uint64    // bytes of stdout and stderr an attach leaves out
	remote *remoteOwner // the owner is on another node; nil: this one
	ticks  int          // remote owner checks so far

	launched bool
	finished bool // the terminal frame was sent and the actor wound up
	detached bool
	reported bool // the root was told this command is done

	queue   []stdinReq // stdin requests waiting for the one in flight
	writing *stdinReq  // the request a writer goroutine is carrying out
}

// stdinReq is one WriteStdin, CloseStdin, Signal or Resize request: they
// reach the stream one at a time, in order (a Ctrl-C comes after the input
// typed before it).
type stdinReq struct {
	id      string
	replyTo *actor.PID
	data    []byte
	close   bool
	signal  paddock.Signal    // a Signal request
	size    *paddock.TermSize // a Resize request
}

// op is the operation of a request.
func (r stdinReq) op() operation {
	switch {
	case r.signal != "":
		return declarationOf[*messages.SignalRequest]()
	case r.size != nil:
		return declarationOf[*messages.ResizeRequest]()
	case r.close:
		return declarationOf[*messages.CloseStdinRequest]()
	}
	return declarationOf[*messages.WriteStdinRequest]()
}

// isCloseStdin reports a CloseStdin request.
func isCloseStdin(r stdinReq) bool { return r.close && r.signal == "" && r.size == nil }

func newCommand(rt *Runtime, ref paddock.Ref, m *streamOpened, root *actor.PID) actor.Producer {
	return func() actor.Receiver {
		c := &commandActor{rt: rt, ref: ref, provider: m.provider, stream: m.stream, window: m.window, root: root, skip: m.skip}
		c.out = newOutlet(rt, m.owner, supervisor.NewGuard(string(ref), c.violation))
		if rt.isRemote(m.owner) {
			c.remote = newRemoteOwner(rt, m.owner)
		}
		return c
	}
}

// violation reports a frame-contract breach by the adapter.
func (a *commandActor) violation(v supervisor.Violation) {
	a.rt.log.Warn().Str("ref", v.Ref).Str("violation", v.What).Str("event", v.Kind).
		Str("provider", string(a.provider)).Msg("adapter broke the frame contract; dropped")
	a.rt.engine.BroadcastEvent(v)
}

// Receive handles launch, the reader's reports, credits, stdin and detach.
func (a *commandActor) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		a.self = c.PID()
		a.out.self = a.self
		a.meter = a.rt.tel.Stream(a.provider)
		if a.remote != nil {
			r := c.Engine().SendRepeat(a.self, remoteTick{}, a.remote.lease/10)
			a.remote.beats = &r
		}
	case remoteTick:
		a.checkOwner(c)
	case launch:
		a.launch(c)
	case readerDone:
		a.finish(c)
	case readerPanic:
		a.fail(c, supervisor.ReasonAdapterPanic, supervisor.PanicText(m.v))
	case *messages.Credit:
		a.credit(int(m.GetN()))
	case *messages.WriteStdinRequest:
		a.stdin(c, stdinReq{id: m.GetId(), replyTo: c.Sender(), data: m.GetData()})
	case *messages.CloseStdinRequest:
		a.stdin(c, stdinReq{id: m.GetId(), replyTo: c.Sender(), close: true})
	case *messages.SignalRequest:
		a.stdin(c, stdinReq{id: m.GetId(), replyTo: c.Sender(), signal: paddock.Signal(m.GetSignal())})
	case *messages.ResizeRequest:
		size := wire.TermSizeFromMessage(m.GetSize())
		if size == nil {
			size = &paddock.TermSize{}
		}
		a.stdin(c, stdinReq{id: m.GetId(), replyTo: c.Sender(), size: size})
	case stdinDone:
		a.writing = nil
		err := m.err
		over := a.out.ended() || a.detached
		if over && a.ctx.Err() != nil && errors.Is(err, a.ctx.Err()) {
			// Cut short by our own cancellation: as if it came after the
			// end (a close of an exited command is fine).
			err = paddock.ErrCommandExited
			if m.req.close && !a.detached {
				err = nil
			}
		}
		a.answer(c, m.req, err)
		if over {
			a.report(c) // it waited for this write's real result
			return
		}
		a.nextWrite(c)
	case writerPanic:
		a.writing = nil
		a.answer(c, m.req, &paddock.WriteFailedError{Detail: supervisor.ReasonAdapterPanic})
		a.fail(c, supervisor.ReasonAdapterPanic, supervisor.PanicText(m.v))
	case *messages.StopCommandRequest:
		a.detach(c)
		a.reply(c, c.Sender(), &messages.StopCommandReply{Id: m.GetId()})
	case detachCommand:
		a.detach(c)
	case actor.Stopped:
		a.meter.Done()
		a.stopped(c)
		if a.remote != nil {
			if a.remote.beats != nil {
				a.remote.beats.Stop()
			}
			a.remote.release()
		}
	}
}

// checkOwner detaches a command whose owner on another node sent nothing
// for a lease (its node died or lost the link: the command stays
// attachable), and every second tick tells the owner the last frame sent.
func (a *commandActor) checkOwner(c *actor.Context) {
	if a.detached || a.finished {
		return
	}
	if a.remote.lapsed(time.Now()) {
		a.rt.log.Warn().Str("ref", string(a.ref)).Str("owner", a.out.owner.String()).Msg("remote owner silent for a lease; detached")
		a.detach(c)
		return
	}
	if a.ticks++; a.ticks%beatEvery == 0 {
		a.out.beat(string(a.ref))
	}
}

// OnPanic turns a panic in this actor into the owner's one terminal frame;
// the actor then finishes through the root like any other.
func (a *commandActor) OnPanic(c *actor.Context, v any) bool {
	a.fail(c, supervisor.ReasonAdapterPanic, supervisor.PanicText(v))
	a.finish(c)
	return false
}

// fail sends the terminal Error frame the runtime decided (unavailable with
// reason), unless the subscription already has its terminal frame or was
// detached, and winds the command up.
func (a *commandActor) fail(c *actor.Context, reason, detail string) {
	if a.out.emit(func(g *supervisor.Guard) messages.Frame {
		if g.Done() {
			return nil // not a breach: the adapter's own terminal frame won
		}
		a.meter.Failed()
		return g.Fail(reason, detail, messages.ErrorKind_ERROR_KIND_UNAVAILABLE)
	}) {
		a.finish(c)
	}
}

// launch starts the reader; a second launch does nothing.
func (a *commandActor) launch(c *actor.Context) {
	if a.launched || a.out.ended() || a.detached {
		return
	}
	a.launched = true
	a.ctx, a.cancel = context.WithCancel(a.rt.opsCtx)
	a.permits = newPermits(a.window)
	a.startReader(c.Engine())
	a.nextWrite(c) // stdin that arrived before the launch
}

// drainGrace is how long the reader keeps reading after the terminal event,
// to catch (and report) an adapter that sends more.
const drainGrace = 50 * time.Millisecond

// startReader reads the stream, one read per permit, and sends each event's
// frame out through the outlet, until the terminal frame, the stream's end,
// or cancel. It owns the stream's local end and closes it when it returns;
// after the terminal frame it tells the actor, which winds the command up.
func (a *commandActor) startReader(e *actor.Engine) {
	r := &streamReader{
		e: e, st: a.stream, ctx: a.ctx, permits: a.permits, self: a.self, ref: string(a.ref), out: a.out, meter: a.meter,
		report: a.violation, skip: a.skip, remote: a.remote, opsCtx: a.rt.opsCtx,
	}
	if r.remote != nil { // a remote owner hears at once that the command waits for its credit
		r.stalled = func() { r.out.beat(r.ref) }
	}
	a.rt.goTracked("reading the stream of "+r.ref, r.run)
}

// streamReader is a command's reader goroutine. Its loop keeps a small
// stack frame, and what an event costs happens in forward: a live command
// parked in its stream's Next holds the smallest goroutine stack.
type streamReader struct {
	e       *actor.Engine
	st      paddock.Stream
	ctx     context.Context
	permits *permits
	self    *actor.PID
	ref     string
	out     *outlet
	meter   *telemetry.Stream
	report  func(supervisor.Violation)
	skip    [2]uint64
	remote  *remoteOwner
	stalled func()
	opsCtx  context.Context
	parts   []paddock.Event // each read's frames, reused
}

func (r *streamReader) run() {
	defer r.meter.Flush()
	defer closeQuietly(r.st)
	if r.remote != nil {
		defer r.remote.release() // after the last take
	}
	defer func() {
		if v := recover(); v != nil {
			r.e.Send(r.self, readerPanic{v})
		}
	}()
	for r.permits.take(r.ctx, r.meter, r.stalled) {
		ev, err := r.st.Next(r.ctx)
		if r.ctx.Err() != nil || r.forward(&ev, err) {
			return // detached or stopped (nobody wants more), or the end
		}
	}
}

// forward sends the frames of one read and reports whether reading is
// over: the terminal frame went out, or the stream failed.
//
//go:noinline
func (r *streamReader) forward(ev *paddock.Event, err error) (over bool) {
	var terminal bool
	if err != nil {
		terminal = r.out.emit(func(g *supervisor.Guard) messages.Frame {
			f := g.End(err)
			if f != nil {
				r.meter.Failed()
			}
			return f
		})
	} else {
		r.parts = pieces(r.parts[:0], *ev, &r.skip, r.remote != nil)
		if len(r.parts) == 0 { // all of it skipped: the read is free
			r.permits.give(1)
			return false
		}
		for _, ev := range r.parts {
			if r.remote != nil && !ev.Kind.Terminal() && !r.remote.take(r.ctx, len(ev.Data), r.meter, r.stalled) {
				return true
			}
			terminal = r.out.emit(func(g *supervisor.Guard) messages.Frame {
				f := g.Event(ev)
				if f != nil {
					r.meter.Event(ev)
				}
				return f
			})
			if terminal {
				break
			}
		}
	}
	if terminal {
		r.e.Send(r.self, readerDone{})
	}
	if err != nil || terminal {
		if err == nil {
			drainAfterTerminal(r.opsCtx, r.st, r.ref, r.report)
		}
		return true
	}
	return false
}

// drainAfterTerminal reads, for a short grace, whatever an adapter sends
// after its terminal event: each such event breaks the contract, and is
// reported and dropped, never forwarded.
func drainAfterTerminal(parent context.Context, st paddock.Stream, ref string, report func(supervisor.Violation)) {
	ctx, cancel := context.WithTimeout(parent, drainGrace)
	defer cancel()
	for {
		ev, err := st.Next(ctx)
		if err != nil {
			return
		}
		what := supervisor.ViolationLateOutput
		if ev.Kind.Terminal() {
			what = supervisor.ViolationDuplicateTerminal
		}
		report(supervisor.Violation{Ref: ref, What: what, Kind: ev.Kind.String()})
	}
}

// closeQuietly closes a stream, absorbing a panicking Close.
func closeQuietly(st paddock.Stream) {
	defer func() { _ = recover() }()
	_ = st.Close()
}

// write starts a goroutine that carries out one stdin request and reports
// it; the actor starts the next once this one is answered, so requests run
// one at a time, in order, and a command with no stdin in flight has no
// writer goroutine.
func (a *commandActor) write(e *actor.Engine, req stdinReq) {
	st, ctx, self := a.stream, a.ctx, a.self
	ad, _ := a.rt.cfg.Adapters.Lookup(a.provider) // the adapter it was spawned through
	a.rt.goTracked("writing to the stdin of "+string(a.ref), func() {
		defer func() {
			if v := recover(); v != nil {
				e.Send(self, writerPanic{req: req, v: v})
			}
		}()
		var err error
		switch {
		case req.signal != "" && ad == nil, req.size != nil && ad == nil:
			err = paddock.ErrNotSupported
		case req.signal != "":
			err = paddock.SignalCommand(ctx, ad, st, req.signal)
		case req.size != nil:
			err = paddock.ResizeTerminal(ctx, ad, st, *req.size)
		case req.close:
			err = st.CloseStdin(ctx)
		default:
			err = st.WriteStdin(ctx, req.data)
		}
		e.Send(self, stdinDone{req: req, err: err})
	})
}

// credit lets the reader make n more reads; from an owner on another
// node it also gives back the credited frames' bytes and renews its lease.
func (a *commandActor) credit(n int) {
	if a.remote != nil {
		a.remote.credited(n)
	}
	if n <= 0 || a.permits == nil {
		return
	}
	a.permits.give(n)
}

// stdin queues a stdin request, or answers it when the command can take no
// more: after a detach both are command_exited; after the exit a write is
// command_exited and a close is ok.
func (a *commandActor) stdin(c *actor.Context, req stdinReq) {
	if a.detached || a.out.ended() {
		a.refuse(c, req)
		return
	}
	a.queue = append(a.queue, req)
	a.nextWrite(c)
}

// nextWrite starts the next queued request when none is in flight (and the
// command is launched).
func (a *commandActor) nextWrite(c *actor.Context) {
	if a.writing != nil || len(a.queue) == 0 || !a.launched {
		return
	}
	req := a.queue[0]
	a.queue = a.queue[1:]
	a.writing = &req
	a.write(c.Engine(), req)
}

// answer replies to a stdin request with err.
func (a *commandActor) answer(c *actor.Context, req stdinReq, err error) {
	var f *messages.Failure
	o := req.op()
	if err != nil {
		f = wire.FailureOf(&paddock.OpError{Op: o.name(), Provider: a.provider, Err: err})
	}
	a.reply(c, req.replyTo, o.answer(req.id, f))
}

// refuse answers a stdin request that never reached the stream: after a
// detach, writes and closes have exited; after the exit a write has exited
// and a close is ok.
func (a *commandActor) refuse(c *actor.Context, req stdinReq) {
	var err error
	if a.detached || !isCloseStdin(req) {
		err = paddock.ErrCommandExited
	}
	a.answer(c, req, err)
}

func (a *commandActor) reply(c *actor.Context, to *actor.PID, msg proto.Message) {
	if to != nil {
		c.Send(to, msg)
	}
}

// finish winds the command up once its terminal frame is out: it stops the
// goroutines, answers queued stdin, and tells the root, which stops this
// actor. It runs once.
func (a *commandActor) finish(c *actor.Context) {
	if a.finished {
		return
	}
	a.finished = true
	a.stopGoroutines()
	a.refuseQueued(c)
	a.report(c)
}

// detach ends this subscription locally, like StopCommand: no further frame
// (not even a terminal one) goes to the owner, and the remote command keeps
// running.
func (a *commandActor) detach(c *actor.Context) {
	if a.detached {
		return
	}
	a.detached = true
	a.out.detach()
	a.stopGoroutines()
	if !a.launched {
		closeQuietly(a.stream)
	}
	a.refuseQueued(c)
	a.report(c)
}

func (a *commandActor) stopGoroutines() {
	if a.cancel != nil {
		a.cancel()
	}
}

// report tells the root this command is done, once, and only when no
// stdin write is in flight: that write is answered with its real result
// first, since the root stops this actor on the report.
func (a *commandActor) report(c *actor.Context) {
	if a.reported || a.rt.stopping.Load() || a.writing != nil {
		return // (during a shutdown the root stops everything itself)
	}
	a.reported = true
	c.Send(a.root, commandDone{ref: a.ref, detached: a.detached})
}

// stopped is the last word: a subscriber that saw no terminal frame gets
// Error{stopped_before_exit}, every pending request is answered, and the
// goroutines are cancelled.
func (a *commandActor) stopped(c *actor.Context) {
	a.fail(c, supervisor.ReasonStoppedBeforeExit, "")
	a.stopGoroutines()
	if !a.launched {
		closeQuietly(a.stream)
	}
	if a.writing != nil { // its outcome will never be reported now
		a.answer(c, *a.writing, &paddock.UnavailableError{Detail: supervisor.ReasonStoppedBeforeExit})
		a.writing = nil
	}
	a.refuseQueued(c)
}

// refuseQueued refuses every request still waiting for the writer.
func (a *commandActor) refuseQueued(c *actor.Context) {
	for _, req := range a.queue {
		a.refuse(c, req)
	}
	a.queue = nil
}
