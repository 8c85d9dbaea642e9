package actors

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/telemetry"
)

// Defaults of the runtime's remote owners (docs/contract.md#remote).
const (
	// DefaultRemoteLease is how long a command waits for a word (a credit)
	// from an owner on another node before it detaches.
	DefaultRemoteLease = 30 * time.Second
	// DefaultLinkWindow bounds the bytes of output frames in flight to
	// one other node, for all its subscriptions together.
	DefaultLinkWindow = 16 << 20
	// RemoteFrameMax is the largest payload of a frame sent to another
	// node; a larger chunk of output crosses as several frames.
	RemoteFrameMax = 32 << 10
)

// isRemote reports whether owner lives on another node.
func (rt *Runtime) isRemote(owner *actor.PID) bool {
	return owner != nil && owner.Address != rt.engine.Address()
}

// linkWindow bounds the bytes of output frames in flight to one node: a
// frame takes its bytes before it is sent and gives them back when its
// owner credits it (or its subscription ends).
type linkWindow struct {
	mu    sync.Mutex
	free  int
	freed chan struct{} // closed and replaced whenever bytes come back
}

// linkTo returns the window of the link to addr.
func (rt *Runtime) linkTo(addr string) *linkWindow {
	w, _ := rt.links.LoadOrStore(addr, &linkWindow{free: rt.cfg.LinkWindow, freed: make(chan struct{})})
	return w.(*linkWindow)
}

// tryTake takes n bytes if they are free.
func (w *linkWindow) tryTake(n int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.free >= n {
		w.free -= n
		return true
	}
	return false
}

// take waits until n bytes are free and takes them; false when ctx ended
// first.
func (w *linkWindow) take(ctx context.Context, n int) bool {
	for {
		w.mu.Lock()
		if w.free >= n {
			w.free -= n
			w.mu.Unlock()
			return true
		}
		freed := w.freed
		w.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return false
		}
	}
}

// give returns n bytes.
func (w *linkWindow) give(n int) {
	if n == 0 {
		return
	}
	w.mu.Lock()
	w.free += n
	close(w.freed)
	w.freed = make(chan struct{})
	w.mu.Unlock()
}

// remoteOwner is what a command keeps for an owner on another node: the
// sizes of the frames sent and not yet credited (their bytes are taken
// from the link's window), and when the owner last sent a credit, which
// doubles as its lease.
type remoteOwner struct {
	link  *linkWindow
	lease time.Duration
	heard atomic.Int64 // unix nanoseconds of the owner's last credit

	mu      sync.Mutex
	pending []int // uncredited frames' sizes, oldest first
	held    int   // their sum

	beats *actor.SendRepeater
}

func newRemoteOwner(rt *Runtime, owner *actor.PID) *remoteOwner {
	r := &remoteOwner{link: rt.linkTo(owner.Address), lease: rt.cfg.RemoteLease}
	r.heard.Store(time.Now().UnixNano())
	return r
}

// take waits for n bytes of the link's window for a frame about to be
// sent (calling stalled first, and counted as waiting for credit
// meanwhile), and records it as uncredited.
func (r *remoteOwner) take(ctx context.Context, n int, meter *telemetry.Stream, stalled func()) bool {
	if !r.link.tryTake(n) {
		stalled()
		meter.Waiting(true)
		ok := r.link.take(ctx, n)
		meter.Waiting(false)
		if !ok {
			return false
		}
	}
	r.mu.Lock()
	r.pending = append(r.pending, n)
	r.held += n
	r.mu.Unlock()
	return true
}

// credited gives back the bytes of the n oldest uncredited frames, and
// renews the owner's lease.
func (r *remoteOwner) credited(n int) {
	r.heard.Store(time.Now().UnixNano())
	r.mu.Lock()
	n = min(n, len(r.pending))
	bytes := 0
	for _, s := range r.pending[:n] {
		bytes += s
	}
	r.pending = r.pending[n:]
	r.held -= bytes
	r.mu.Unlock()
	r.link.give(bytes)
}

// release gives back every uncredited frame's bytes: the subscription
// ended, and nothing of it is owed any more.
func (r *remoteOwner) release() {
	r.mu.Lock()
	bytes := r.held
	r.pending, r.held = nil, 0
	r.mu.Unlock()
	r.link.give(bytes)
}

// lapsed reports whether the owner sent nothing for three quarters of a
// lease (it credits every fifth): checked every tenth, a command detaches
// within the lease of its owner's last word.
func (r *remoteOwner) lapsed(now time.Time) bool {
	return now.Sub(time.Unix(0, r.heard.Load())) > r.lease*3/4
}

// remoteTick is the command's periodic check of a remote owner: every
// tenth of a lease; each second tick also beats.
type remoteTick struct{}

// beatEvery is how many ticks pass between beats; a lease has 10 ticks.
const beatEvery = 2

// pieces appends to out ev as its owner gets it: the first skip bytes of
// each stream left out (an attach asked for that), and, for an owner on
// another node, cut into frames of at most RemoteFrameMax bytes. Other
// events pass whole. The reader reuses out, so the hot path allocates
// nothing.
func pieces(out []paddock.Event, ev paddock.Event, skip *[2]uint64, remote bool) []paddock.Event {
	i := -1
	switch ev.Kind {
	case paddock.EventStdout:
		i = 0
	case paddock.EventStderr:
		i = 1
	}
	if i < 0 {
		return append(out, ev)
	}
	data := ev.Data
	if s := skip[i]; s > 0 {
		n := min(s, uint64(len(data)))
		skip[i] -= n
		data = data[n:]
		if len(data) == 0 {
			return out
		}
	}
	if !remote || len(data) <= RemoteFrameMax {
		return append(out, paddock.Event{Kind: ev.Kind, Data: data})
	}
	for len(data) > 0 {
		n := min(len(data), RemoteFrameMax)
		out = append(out, paddock.Event{Kind: ev.Kind, Data: data[:n:n]})
		data = data[n:]
	}
	return out
}
