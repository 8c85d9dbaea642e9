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
	case paddock.EventStdout, paddock.EventStderr, paddock.EventFile:
		if g.done {
			g.violate(ViolationLateOutput, ev.Kind.String())
			return nil
		}
		g.seq++
		g.outputs++
		return wire.OutputFrame(g.ref, g.seq, ev)
	case paddock.EventExit:
		if !g.terminal(ev.Kind.String()) {
			return nil
		}
		return wire.ExitFrame(g.ref, g.seq, g.outputs, ev.Code)
	case paddock.EventError:
		if ev.Err == nil {
			return g.Fail(ReasonClosedBeforeExit, "error event without an error", messages.ErrorKind_ERROR_KIND_UNAVAILABLE)
		}
		reason, kind := wire.ErrorFrameFields(ev.Err)
		return g.Fail(reason, ev.Err.Error(), kind)
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
	return wire.ErrorFrame(g.ref, g.seq, g.outputs, reason, detail, kind)
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
