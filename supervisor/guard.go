package supervisor

import (
	"errors"
	"io"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
)

// Reasons carried by Error frames that the runtime itself decides.
const (
	ReasonClosedBeforeExit  = paddock.DetailClosedBeforeExit // the stream ended without an exit
	ReasonAdapterPanic      = "adapter_panic"                // the adapter (or the command actor) panicked
	ReasonStoppedBeforeExit = "stopped_before_exit"          // the runtime stopped the command first
)

// Guard turns one subscription's stream events into frames that keep the
// contract: sequence numbers from 1 without gaps, output only before the
// terminal frame, exactly one terminal frame (Exit or Error) carrying the
// count of output frames, and an Error{closed_before_exit} for a stream that
// ends without an exit. Whatever breaks that is dropped and handed to
// OnViolation. A Guard is used by one goroutine (its command actor).
type Guard struct {
	ref         string
	seq         uint64
	outputs     uint64
	done        bool
	onViolation func(Violation)
}

// NewGuard returns the guard of subscription ref. onViolation may be nil.
func NewGuard(ref string, onViolation func(Violation)) *Guard {
	return &Guard{ref: ref, onViolation: onViolation}
}

// Done reports whether the terminal frame was produced.
func (g *Guard) Done() bool { return g.done }

// Outputs is the number of output frames produced.
func (g *Guard) Outputs() uint64 { return g.outputs }

// Event returns the frame for one stream event, or nil when the event must
// be dropped (it came after the terminal frame).
func (g *Guard) Event(ev paddock.Event) messages.Frame {
	switch ev.Kind {
	case paddock.EventStdout, paddock.EventStderr:
		if g.done {
			g.violate(ViolationLateOutput, ev.Kind.String())
			return nil
		}
		g.seq++
		g.outputs++
		if ev.Kind == paddock.EventStdout {
			return &messages.Stdout{Ref: g.ref, Seq: g.seq, Data: ev.Data}
		}
		return &messages.Stderr{Ref: g.ref, Seq: g.seq, Data: ev.Data}
	case paddock.EventExit:
		if !g.terminal(ev.Kind.String()) {
			return nil
		}
		return &messages.Exit{Ref: g.ref, Seq: g.seq, Code: int32(ev.Code), OutputFrames: g.outputs}
	case paddock.EventError:
		return g.Fail(errorFrameFields(ev.Err))
	}
	// An event of no known kind has an unknown fate: the stream is broken.
	return g.Fail(ReasonClosedBeforeExit, "unknown event kind "+ev.Kind.String(), messages.ErrorKind_ERROR_KIND_UNAVAILABLE)
}

// End returns the frame for a stream that ended (Next returned err) before
// any terminal event: Error{closed_before_exit}, never a made-up exit. After
// the terminal frame an ending is normal and yields nil.
func (g *Guard) End(err error) messages.Frame {
	if g.done {
		return nil
	}
	detail := ""
	if err != nil && !errors.Is(err, io.EOF) {
		detail = err.Error()
	}
	return g.Fail(ReasonClosedBeforeExit, detail, messages.ErrorKind_ERROR_KIND_UNAVAILABLE)
}

// Fail returns the terminal Error frame with reason, detail and kind, or nil
// (and a violation) when a terminal frame was already produced.
func (g *Guard) Fail(reason, detail string, kind messages.ErrorKind) messages.Frame {
	if !g.terminal("error") {
		return nil
	}
	return &messages.Error{Ref: g.ref, Seq: g.seq, Reason: reason, Detail: detail, Kind: kind, OutputFrames: g.outputs}
}

// terminal claims the terminal slot; a second claim is a violation.
func (g *Guard) terminal(kind string) bool {
	if g.done {
		g.violate(ViolationDuplicateTerminal, kind)
		return false
	}
	g.done = true
	g.seq++
	return true
}

func (g *Guard) violate(what, kind string) {
	if g.onViolation != nil {
		g.onViolation(Violation{Ref: g.ref, What: what, Kind: kind})
	}
}

// errorFrameFields derives an Error frame's reason, detail and kind from an
// adapter's error event: the reason is the error's detail token where it has
// one (closed_before_exit, start_timeout, ...), else its kind.
func errorFrameFields(err error) (reason, detail string, kind messages.ErrorKind) {
	if err == nil {
		return ReasonClosedBeforeExit, "error event without an error", messages.ErrorKind_ERROR_KIND_UNAVAILABLE
	}
	f := wire.FailureOf(err)
	reason = f.GetDetail()
	if reason == "" {
		reason = string(wire.KindFromCode(f.GetKind()))
	}
	if reason == "" {
		reason = "error"
	}
	return reason, err.Error(), f.GetKind()
}

// FrameError is the error an Error frame stands for, as Exec returns it: a
// taxonomy error of the frame's kind whose detail is the frame's reason
// (closed_before_exit reads as ErrClosedBeforeExit). A frame of no taxonomy
// kind is unavailable: its fate is unknown.
func FrameError(f *messages.Error) error {
	kind := f.GetKind()
	if wire.KindFromCode(kind) == "" {
		kind = messages.ErrorKind_ERROR_KIND_UNAVAILABLE
	}
	return wire.ErrorOf(&messages.Failure{Kind: kind, Detail: f.GetReason()})
}
