package actors

import (
	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
)

// A request that opens a stream (a spawn, an attach, a watch) is served
// once per sender and id when it comes from another node: a remote owner
// whose reply the link lost sends the same request again, which must not
// start the command a second time. The root remembers each such opening
// (as many as Config.FinishedRefs) and answers a repeat with the first
// one's reply, or not at all while that one is under way.

// opener is a request that opens a stream: it names the owner of its
// frames.
type opener interface {
	handleRequest
	GetOwner() *messages.Pid
}

// openKey names one opening request: its sender and its id.
type openKey struct{ sender, id string }

// openKeyOf is the key of req when it opens a stream and its sender is on
// another node than local (the engine's address); false otherwise.
func openKeyOf(req proto.Message, sender *actor.PID, local string) (openKey, bool) {
	q, ok := req.(opener)
	if !ok || sender == nil || sender.GetAddress() == local || q.GetId() == "" {
		return openKey{}, false
	}
	return openKey{sender: sender.String(), id: q.GetId()}, true
}

// openAnswered tells the root the reply a sandbox actor sent to an opening
// request (a refusal: the root itself answers one that opened a stream).
type openAnswered struct {
	key   openKey
	reply proto.Message
}

// routeOpen forwards an opening request to its sandbox's actor, unless
// its sender sent it before: then the first one's reply is sent again, if
// there is one yet.
func routeOpen[Q opener](r *root, c *actor.Context, q Q) {
	if key, ok := openKeyOf(q, c.Sender(), c.Engine().Address()); ok {
		if reply, seen := r.opens.get(key); seen {
			if reply != nil {
				r.reply(c, reply)
			}
			return
		}
		r.opens.put(key, nil)
	}
	h := q.GetHandle()
	r.toSandbox(c, q, paddock.Provider(h.GetProvider()), h.GetName())
}
