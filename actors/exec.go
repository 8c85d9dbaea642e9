package actors

import (
	"context"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"github.com/paddockhq/paddock/supervisor"
)

// execCollector owns the frames of one exec and answers its request
// (docs/contract.md#exec-deadlines): stdout only, stderr interleaved when merged, the
// partial output discarded on an Error frame, and the one deadline checked
// on every frame's arrival (queued frames never win against an expired
// budget) and by a timer. On expiry it answers exec_timeout with the
// original timeout and stops; its stop detaches the command locally (the
// remote process is not proven stopped).
type execCollector struct {
	rt      *Runtime
	root    *actor.PID
	job     *execJob
	replyTo *actor.PID
	reqID   string
	credits *Credits

	out     []byte
	replied bool
	cancel  context.CancelFunc
}

func newExecCollector(rt *Runtime, so *streamOpened, root *actor.PID) actor.Producer {
	return func() actor.Receiver {
		return &execCollector{rt: rt, root: root, job: so.exec, replyTo: so.replyTo, reqID: so.reqID, credits: NewCredits(so.window)}
	}
}

// Receive collects frames and watches the deadline.
func (x *execCollector) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		x.startTimer(c.Engine(), c.PID())
	case *messages.Stdout:
		if x.expired(c) {
			return
		}
		x.out = append(x.out, m.GetData()...)
		x.credits.Consumed(c, m)
	case *messages.Stderr:
		if x.expired(c) {
			return
		}
		if x.job.merge {
			x.out = append(x.out, m.GetData()...)
		}
		x.credits.Consumed(c, m)
	case *messages.Exit:
		if x.expired(c) {
			return
		}
		x.answer(c, &messages.ExecReply{Id: x.reqID, Output: x.out, ExitCode: m.GetCode()})
	case *messages.Error:
		if x.expired(c) {
			return
		}
		x.answer(c, &messages.ExecReply{Id: x.reqID, Failure: x.failure(supervisor.FrameError(m))})
	case deadlineHit:
		x.expired(c)
	case actor.Stopped:
		if x.cancel != nil {
			x.cancel()
		}
		if !x.replied {
			x.replied = true
			x.send(c, &messages.ExecReply{Id: x.reqID, Failure: x.failure(&paddock.UnavailableError{Detail: supervisor.ReasonStoppedBeforeExit})})
		}
	}
}

// startTimer sends deadlineHit when the budget runs out.
func (x *execCollector) startTimer(e *actor.Engine, self *actor.PID) {
	if !x.job.deadline.Finite() {
		return
	}
	ctx, cancel := context.WithCancel(x.rt.opsCtx)
	x.cancel = cancel
	expiry := x.job.deadline.C()
	x.rt.goTracked(func() {
		select {
		case <-expiry:
			e.Send(self, deadlineHit{})
		case <-ctx.Done():
		}
	})
}

// expired answers the timeout error if the budget is spent.
func (x *execCollector) expired(c *actor.Context) bool {
	if !x.job.deadline.Finite() || !x.job.deadline.Expired() {
		return false
	}
	x.answer(c, &messages.ExecReply{Id: x.reqID, Failure: x.failure(x.job.deadline.Err())})
	return true
}

func (x *execCollector) failure(err error) *messages.Failure {
	return wire.FailureOf(&paddock.OpError{Op: x.job.op, Provider: x.job.handle.Provider, Name: x.job.handle.Name, Err: err})
}

// answer replies once, then asks the root to stop the collector (its stop
// detaches a command still running after a timeout).
func (x *execCollector) answer(c *actor.Context, reply *messages.ExecReply) {
	if x.replied {
		return
	}
	x.replied = true
	x.send(c, reply)
	x.out = nil
	if !x.rt.stopping.Load() {
		c.Send(x.root, collectorDone{pid: c.PID()})
	}
}

func (x *execCollector) send(c *actor.Context, reply *messages.ExecReply) {
	if x.replyTo != nil {
		c.Engine().Send(x.replyTo, reply)
	}
}
