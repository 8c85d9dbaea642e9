package actors

import (
	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock/messages"
)

// Credits is the flow-control helper for an owner actor: call Consumed once
// a frame is handled, and it grants the command credit for what was
// consumed, half a window at a time. An owner that never grants credit
// receives at most a window of output frames per command.
type Credits struct {
	batch uint32
	owed  map[string]uint32
}

// NewCredits returns the helper for commands spawned with window (0 = the
// runtime's default window, DefaultWindow unless configured otherwise).
func NewCredits(window int) *Credits {
	if window <= 0 {
		window = DefaultWindow
	}
	return &Credits{batch: uint32(max(window/2, 1)), owed: map[string]uint32{}}
}

// Consumed records that f, just handled in c's Receive, is consumed, and
// sends its sender (the command actor) credit when half a window is owed.
// A terminal frame forgets its subscription.
func (k *Credits) Consumed(c *actor.Context, f messages.Frame) {
	if messages.IsTerminal(f) {
		delete(k.owed, f.GetRef())
		return
	}
	n := k.owed[f.GetRef()] + 1
	if n < k.batch {
		k.owed[f.GetRef()] = n
		return
	}
	delete(k.owed, f.GetRef())
	if c.Sender() != nil {
		c.Send(c.Sender(), &messages.Credit{Ref: f.GetRef(), N: n})
	}
}
