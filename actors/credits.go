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
	window int
	owed   map[string]creditBatch
}

// NewCredits returns the helper for commands spawned with window: the
// window given to SpawnTo or AttachTo, or, where that was 0, the runtime's
// Window(). 0 here means DefaultWindow, so a runtime configured with a
// smaller window must pass it: a helper batching more than the command's
// window would never grant credit.
func NewCredits(window int) *Credits {
	return &Credits{window: window, owed: map[string]creditBatch{}}
}

// Consumed records that f, just handled in c's Receive, is consumed, and
// sends its sender (the command actor) credit when half a window is owed.
// A terminal frame forgets its subscription.
func (k *Credits) Consumed(c *actor.Context, f messages.Frame) {
	ref := f.GetRef()
	if messages.IsTerminal(f) {
		delete(k.owed, ref)
		return
	}
	b, ok := k.owed[ref]
	if !ok {
		b = newCreditBatch(k.window)
	}
	n := b.consume()
	k.owed[ref] = b
	if n > 0 && c.Sender() != nil {
		c.Send(c.Sender(), &messages.Credit{Ref: ref, N: n})
	}
}

// creditBatch is the one credit rule of the runtime's subscribers (owner
// actors through Credits, plain-Go streams as they take frames): consumed
// output frames are granted back half a window at a time.
type creditBatch struct {
	size, owed uint32
}

// newCreditBatch returns the rule for window (0 = DefaultWindow).
func newCreditBatch(window int) creditBatch {
	if window <= 0 {
		window = DefaultWindow
	}
	return creditBatch{size: uint32(max(window/2, 1))}
}

// consume counts one consumed output frame and returns the credit to grant
// now: 0 until half a window is owed.
func (b *creditBatch) consume() uint32 {
	if b.owed++; b.owed < b.size {
		return 0
	}
	n := b.owed
	b.owed = 0
	return n
}
