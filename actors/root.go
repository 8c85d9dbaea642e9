package actors

import (
	"context"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"github.com/paddockhq/paddock/supervisor"
	"google.golang.org/protobuf/proto"
)

// root is the runtime's root actor: it routes every request (unknown
// provider first, then the sandbox actor of the handle), keeps the table of
// live and recently finished commands, starts command actors on explicit
// launch, and detaches the commands of owners that stop. Provider calls never
// run here.
//
// The actors it starts are top-level processes with ids under its own
// (<root>/sandbox/<provider>/<name>, <root>/cmd/<ref>, ...), not hollywood
// children: hollywood's parent stop poisons every child and waits, and a
// child that is already stopping never acknowledges that second pill, so the
// wait would never end. The root is the one party that stops them, once
// each, and only it waits.
type root struct {
	rt        *Runtime
	watchdog  *actor.PID
	sandboxes map[string]*actor.PID
	stopping  map[string][]held // sandbox actors being stopped, and the requests held for their successor
	commands  map[paddock.Ref]*liveCommand
	finished  *recent[paddock.Ref, bool]      // recently finished commands: whether each was detached
	opens     *recent[openKey, proto.Message] // stream openings by remote owners: the reply, nil while under way
	owners    map[string]*ownerRefs           // owner PID ID -> its live commands
}

// liveCommand is a command actor and its owner.
type liveCommand struct {
	pid     *actor.PID
	owner   *actor.PID
	sandbox *actor.PID // counts its live commands, for heartbeats
}

// ownerRefs is one owner's live commands.
type ownerRefs struct {
	pid     *actor.PID
	refs    map[paddock.Ref]struct{}
	watched bool // the watchdog reports its stop (a plain-Go stream has no actor to stop: it detaches itself)
}

func newRoot(rt *Runtime) actor.Producer {
	return func() actor.Receiver {
		return &root{
			rt:        rt,
			sandboxes: map[string]*actor.PID{},
			stopping:  map[string][]held{},
			commands:  map[paddock.Ref]*liveCommand{},
			finished:  newRecent[paddock.Ref, bool](rt.cfg.FinishedRefs),
			opens:     newRecent[openKey, proto.Message](rt.cfg.FinishedRefs),
			owners:    map[string]*ownerRefs{},
		}
	}
}

// OnPanic keeps the root running: a bug in routing one message must not take
// every command down.
func (r *root) OnPanic(*actor.Context, any) bool { return false }

// Receive routes one message.
func (r *root) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		r.watchdog = r.spawn(c, supervisor.NewWatchdog(), "watchdog", "0")
	case actor.Stopped:
		r.stopAll(c)
	case *streamOpened:
		r.startCommand(c, m)
	case commandDone:
		r.commandDone(c, m)
	case sandboxGone:
		r.stopSandbox(c, m)
	case sandboxStopped:
		r.sandboxStopped(c, m)
	case supervisor.OwnerDown:
		r.ownerDown(c, m)
	case openAnswered:
		r.opens.update(m.key, m.reply)
	case *fileCall:
		h := m.req.(handleRequest).GetHandle()
		r.toSandboxAs(c, m.req, m, paddock.Provider(h.GetProvider()), h.GetName())
	case proto.Message:
		if o := operationOf(m); o != nil {
			o.route(r, c, m) // as the operation declares
		}
	}
}

// handleRequest is every request addressed by a sandbox handle.
type handleRequest interface {
	proto.Message
	GetId() string
	GetHandle() *messages.Handle
}

// reply answers the request's sender, if it has one.
func (r *root) reply(c *actor.Context, msg proto.Message) {
	if c.Sender() != nil {
		c.Send(c.Sender(), msg)
	}
}

// fail answers req with err, wrapped with its operation (and remembers
// the answer of an opening request from a remote owner).
func (r *root) fail(c *actor.Context, req proto.Message, p paddock.Provider, name string, err error) {
	reply := failureReply(req, wire.FailureOf(&paddock.OpError{Op: opName(req), Provider: p, Name: name, Err: err}))
	if key, ok := openKeyOf(req, c.Sender(), c.Engine().Address()); ok {
		r.opens.update(key, reply)
	}
	r.reply(c, reply)
}

// adapter looks the provider up, answering the loud unknown-provider error
// itself when it is not registered.
func (r *root) adapter(c *actor.Context, req proto.Message, p paddock.Provider, name string) (paddock.Adapter, bool) {
	a, err := r.rt.cfg.Adapters.Lookup(p)
	if err != nil {
		r.fail(c, req, p, name, err)
		return nil, false
	}
	return a, true
}

// toSandbox forwards req to the sandbox actor of p/name, spawning it on
// first use, with the original sender kept for the reply.
func (r *root) toSandbox(c *actor.Context, req proto.Message, p paddock.Provider, name string) {
	r.toSandboxAs(c, req, req, p, name)
}

// toSandboxAs is toSandbox for req carried in msg.
func (r *root) toSandboxAs(c *actor.Context, req proto.Message, msg any, p paddock.Provider, name string) {
	a, ok := r.adapter(c, req, p, name)
	if !ok {
		return
	}
	if err := paddock.ValidateSandboxName(name); err != nil {
		r.fail(c, req, p, name, err)
		return
	}
	r.forward(c, a, p, name, msg)
}

// held is a request waiting for a sandbox actor to be respawned.
type held struct {
	msg    any
	a      paddock.Adapter
	p      paddock.Provider
	name   string
	sender *actor.PID
}

// forward sends msg, with the original sender, to the sandbox actor of
// p/name, spawning it on first use: its id is deterministic,
// <root>/sandbox/<provider>/<name>. While the previous actor of that id is
// still stopping the request is held, since hollywood would hand a new spawn
// the dying actor's PID.
func (r *root) forward(c *actor.Context, a paddock.Adapter, p paddock.Provider, name string, msg any) {
	key := string(p) + "/" + name
	if queue, ok := r.stopping[key]; ok {
		r.stopping[key] = append(queue, held{msg: msg, a: a, p: p, name: name, sender: c.Sender()})
		return
	}
	c.Engine().SendWithSender(r.sandbox(c, a, p, name), msg, c.Sender())
}

// sandbox returns the live sandbox actor of p/name, spawning it if needed.
func (r *root) sandbox(c *actor.Context, a paddock.Adapter, p paddock.Provider, name string) *actor.PID {
	key := string(p) + "/" + name
	if pid, ok := r.sandboxes[key]; ok {
		return pid
	}
	pid := r.spawn(c, newSandbox(r.rt, a, p, name, key, c.PID()), "sandbox", key)
	r.sandboxes[key] = pid
	return pid
}

// spawn starts one of the root's actors as <root>/<kind>/<id>.
func (r *root) spawn(c *actor.Context, p actor.Producer, kind, id string, opts ...actor.OptFunc) *actor.PID {
	opts = append(append(r.rt.actorOpts(), actor.WithID(id)), opts...)
	return c.Engine().Spawn(p, c.PID().ID+"/"+kind, opts...)
}

// stopAll stops every actor the root started and still owns, once each, and
// waits for them on a tracked goroutine (bounded by Shutdown's context).
// Commands first: their Stopped sends each live subscriber its terminal frame.
func (r *root) stopAll(c *actor.Context) {
	e := c.Engine()
	var stops []context.Context
	for _, cmd := range r.commands {
		stops = append(stops, e.Poison(cmd.pid))
	}
	for _, pid := range r.sandboxes {
		stops = append(stops, e.Poison(pid))
	}
	stops = append(stops, e.Poison(r.watchdog))
	deadline, done := r.rt.shutdownCtx(), r.rt.actorsDone
	r.rt.goTracked("stopping the actors", func() {
		defer close(done)
		for _, s := range stops {
			select {
			case <-s.Done():
			case <-deadline.Done():
				return
			}
		}
	})
}

// stopSandbox stops the actor of a destroyed sandbox (requests forwarded
// before stay ahead of its poison pill) and holds new requests until it
// has gone.
func (r *root) stopSandbox(c *actor.Context, m sandboxGone) {
	if r.sandboxes[m.key] != m.pid {
		return
	}
	delete(r.sandboxes, m.key)
	r.stopping[m.key] = nil
	stopped := c.Engine().Poison(m.pid)
	e, self := c.Engine(), c.PID()
	r.rt.goTracked("stopping the actor of "+m.key, func() {
		<-stopped.Done()
		e.Send(self, sandboxStopped{key: m.key})
	})
}

// sandboxStopped replays the held requests to a fresh actor.
func (r *root) sandboxStopped(c *actor.Context, m sandboxStopped) {
	queue := r.stopping[m.key]
	delete(r.stopping, m.key)
	for _, h := range queue {
		c.Engine().SendWithSender(r.sandbox(c, h.a, h.p, h.name), h.msg, h.sender)
	}
}

// list runs ListAllNames on a goroutine of its own.
func (r *root) list(c *actor.Context, m *messages.ListRequest) {
	p := paddock.Provider(m.GetProvider())
	a, ok := r.adapter(c, m, p, "")
	if !ok {
		return
	}
	replyTo, e := c.Sender(), c.Engine()
	r.rt.goTracked("ListAllNames on "+string(p), func() {
		measured := r.rt.measure(m, p, opName(m))
		reply := guardedServe(m, func() proto.Message {
			names, err := a.ListAllNames(r.rt.opsCtx)
			if err != nil {
				return failureReply(m, wire.FailureOf(&paddock.OpError{Op: opName(m), Provider: p, Err: err}))
			}
			return &messages.ListReply{Id: m.GetId(), Names: names}
		})
		measured.End(failureOf(reply))
		e.Send(replyTo, reply)
	})
}

// capabilities answers what provider's adapter advertises now, with no
// provider access: what a node driving this one's sandboxes asks first.
func (r *root) capabilities(c *actor.Context, m *messages.CapabilitiesRequest) {
	a, ok := r.adapter(c, m, paddock.Provider(m.GetProvider()), "")
	if !ok {
		return
	}
	reply := guardedServe(m, func() proto.Message {
		caps := a.Capabilities().List()
		names := make([]string, len(caps))
		for i, cp := range caps {
			names[i] = string(cp)
		}
		return &messages.CapabilitiesReply{Id: m.GetId(), Capabilities: names}
	})
	c.Send(c.Sender(), reply)
}

// exec validates the request and fixes its one deadline now, on the
// runtime's clock under the adapter's limits, answering a budget already
// spent (a zero timeout) without dispatching anything; the sandbox actor
// runs the adapter's Exec under that deadline, which the adapter takes
// from its context instead of fixing one of its own.
func (r *root) exec(c *actor.Context, m *messages.ExecRequest) {
	h := m.GetHandle()
	p, name := paddock.Provider(h.GetProvider()), h.GetName()
	a, ok := r.adapter(c, m, p, name)
	if !ok {
		return
	}
	if err := paddock.ValidateSandboxName(name); err != nil {
		r.fail(c, m, p, name, err)
		return
	}
	dl, _, err := paddock.StartExec(context.Background(), wire.CmdFromMessage(m.GetCmd()), wire.ExecOptsFromMessage(m), paddock.LimitsOf(a), r.rt.cfg.Clock)
	if err != nil {
		r.fail(c, m, p, name, err)
		return
	}
	r.forward(c, a, p, name, &execCall{req: m, deadline: dl})
}

// startCommand starts the command actor of an opened stream, launches it
// and answers the caller.
func (r *root) startCommand(c *actor.Context, m *streamOpened) {
	ref := paddock.Ref(r.rt.newID())
	pid := r.spawn(c, newCommand(r.rt, ref, m, c.PID()), "cmd", string(ref), actor.WithInboxSize(commandInbox))
	r.commands[ref] = &liveCommand{pid: pid, owner: m.owner, sandbox: m.sandbox}
	if m.sandbox != nil {
		c.Send(m.sandbox, commandsAdded{})
	}
	r.watchOwner(c, m.owner, ref)
	cmd := &messages.CommandRef{Provider: string(m.provider), Ref: string(ref)}
	reply := m.answer(cmd)
	if m.opening != (openKey{}) {
		r.opens.update(m.opening, reply)
	}
	c.Engine().Send(m.replyTo, reply) // before the launch: a requester that owns the frames has its reply first
	c.Send(pid, launch{})
}

// watchOwner asks the watchdog about owner's stop, once per owner actor.
func (r *root) watchOwner(c *actor.Context, owner *actor.PID, ref paddock.Ref) {
	o := r.owners[owner.GetID()]
	if o == nil {
		o = &ownerRefs{pid: owner, refs: map[paddock.Ref]struct{}{}, watched: r.rt.sinkOf(owner) == nil}
		r.owners[owner.GetID()] = o
		if o.watched {
			c.Send(r.watchdog, supervisor.Watch{Target: owner, Watcher: c.PID()})
		}
	}
	o.refs[ref] = struct{}{}
}

// commandDone retires a finished command and stops its actor. Requests the
// root forwarded earlier sit ahead of the poison pill, so each is answered.
func (r *root) commandDone(c *actor.Context, m commandDone) {
	cmd, ok := r.commands[m.ref]
	if !ok {
		return
	}
	delete(r.commands, m.ref)
	r.finished.put(m.ref, m.detached)
	if cmd.sandbox != nil {
		c.Send(cmd.sandbox, commandsGone{})
	}
	if o := r.owners[cmd.owner.GetID()]; o != nil {
		delete(o.refs, m.ref)
		if len(o.refs) == 0 {
			delete(r.owners, cmd.owner.GetID())
			if o.watched {
				c.Send(r.watchdog, supervisor.Unwatch{Target: cmd.owner, Watcher: c.PID()})
			}
		}
	}
	c.Engine().Poison(cmd.pid)
}

// ownerDown detaches every command of an owner that stopped, exactly like
// StopCommand: the remote process keeps running and stays attachable.
func (r *root) ownerDown(c *actor.Context, m supervisor.OwnerDown) {
	o := r.owners[m.PID.GetID()]
	if o == nil {
		return
	}
	for ref := range o.refs {
		if cmd := r.commands[ref]; cmd != nil {
			c.Send(cmd.pid, detachCommand{})
		}
	}
}

// command finds a live command for a stdin or stop request, answering the
// unknown-provider error itself.
func (r *root) command(c *actor.Context, req proto.Message, ref *messages.CommandRef) (*liveCommand, bool) {
	if _, ok := r.adapter(c, req, paddock.Provider(ref.GetProvider()), ""); !ok {
		return nil, false
	}
	return r.commands[paddock.Ref(ref.GetRef())], true
}

// writeStdin forwards to a live command; a finished, detached or unknown
// one has exited.
func (r *root) writeStdin(c *actor.Context, m *messages.WriteStdinRequest) {
	r.forwardToLive(c, m, m.GetCommand())
}

// signal forwards to a live command; for any other the command exited.
func (r *root) signal(c *actor.Context, m *messages.SignalRequest) {
	r.forwardToLive(c, m, m.GetCommand())
}

// resize forwards to a live command; for any other the command exited.
func (r *root) resize(c *actor.Context, m *messages.ResizeRequest) {
	r.forwardToLive(c, m, m.GetCommand())
}

// forwardToLive sends a request for one command to its actor, or answers
// ErrCommandExited when it is no longer live.
func (r *root) forwardToLive(c *actor.Context, m request, ref *messages.CommandRef) {
	cmd, ok := r.command(c, m, ref)
	switch {
	case !ok:
	case cmd != nil:
		c.Engine().SendWithSender(cmd.pid, m, c.Sender())
	default:
		r.fail(c, m, paddock.Provider(ref.GetProvider()), "", paddock.ErrCommandExited)
	}
}

// closeStdin forwards to a live command; closing stdin of a finished
// command that is still subscribed is ok; detached or unknown, it has
// exited.
func (r *root) closeStdin(c *actor.Context, m *messages.CloseStdinRequest) {
	cmd, ok := r.command(c, m, m.GetCommand())
	switch {
	case !ok:
	case cmd != nil:
		c.Engine().SendWithSender(cmd.pid, m, c.Sender())
	case r.subscribed(paddock.Ref(m.GetCommand().GetRef())):
		r.reply(c, &messages.CloseStdinReply{Id: m.GetId()})
	default:
		r.fail(c, m, paddock.Provider(m.GetCommand().GetProvider()), "", paddock.ErrCommandExited)
	}
}

// stopCommand forwards to a live command; for any other it is ok.
func (r *root) stopCommand(c *actor.Context, m *messages.StopCommandRequest) {
	cmd, ok := r.command(c, m, m.GetCommand())
	switch {
	case !ok:
	case cmd != nil:
		c.Engine().SendWithSender(cmd.pid, m, c.Sender())
	default:
		r.finished.update(paddock.Ref(m.GetCommand().GetRef()), true)
		r.reply(c, &messages.StopCommandReply{Id: m.GetId()})
	}
}

// subscribed reports a recently finished command that was not detached.
func (r *root) subscribed(ref paddock.Ref) bool {
	detached, ok := r.finished.get(ref)
	return ok && !detached
}
