package remote

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"

	"github.com/anthdm/hollywood/actor"
	hremote "github.com/anthdm/hollywood/remote"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"storj.io/drpc/drpcmanager"
	"storj.io/drpc/drpcmux"
	"storj.io/drpc/drpcserver"
	"storj.io/drpc/drpcwire"
)

// The inbound path of a node: a mutual-TLS listener serving hollywood's
// drpc service, whose batches it unpacks into local sends. Unlike
// hollywood's own reader it logs through the node's logger (quiet by
// default), takes only messages of package messages, and checks every
// index of a batch, so a peer's bad batch costs that batch's bad messages,
// never the connection or a panic.

// listen starts serving peers at the node's address, delivering to e.
func (n *Node) listen(e *actor.Engine) error {
	ln, err := tls.Listen("tcp", n.cfg.Addr, n.tls)
	if err != nil {
		return fmt.Errorf("listening at %s: %w", n.cfg.Addr, err)
	}
	mux := drpcmux.New()
	if err := hremote.DRPCRegisterRemote(mux, receiver{n: n, e: e}); err != nil {
		_ = ln.Close()
		return err
	}
	srv := drpcserver.NewWithOptions(mux, drpcserver.Options{
		Manager: drpcmanager.Options{Reader: drpcwire.ReaderOptions{MaximumBufferSize: n.cfg.BufferSize}},
	})
	ctx, cancel := context.WithCancel(context.Background())
	n.stopListening = cancel
	n.listening.Add(1)
	go func() {
		defer n.listening.Done()
		if err := srv.Serve(ctx, ln); err != nil {
			n.log.Warn().Err(err).Msg("remote: listener stopped")
		}
	}()
	return nil
}

// receiver delivers the batches of one peer's connection.
type receiver struct {
	n *Node
	e *actor.Engine
}

// Receive reads batches until the peer goes away.
func (r receiver) Receive(stream hremote.DRPCRemote_ReceiveStream) error {
	for {
		env, err := stream.Recv()
		if err != nil {
			return nil // the peer closed or lost the connection; it dials again
		}
		r.deliver(env)
	}
}

// deliver sends each message of env to its local target.
func (r receiver) deliver(env *hremote.Envelope) {
	for _, m := range env.GetMessages() {
		types, targets, senders := env.GetTypeNames(), env.GetTargets(), env.GetSenders()
		ti, gi, si := int(m.GetTypeNameIndex()), int(m.GetTargetIndex()), int(m.GetSenderIndex())
		if ti < 0 || ti >= len(types) || gi < 0 || gi >= len(targets) || targets[gi] == nil {
			r.n.refuse("a message pointing outside its batch")
			continue
		}
		name := types[ti]
		if !strings.HasPrefix(name, protocol+".") {
			r.n.refuse(name + " is not a message of package messages")
			continue
		}
		mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name))
		if err != nil {
			r.n.refuse("unknown type " + name)
			continue
		}
		msg := mt.New().Interface()
		if err := proto.Unmarshal(m.GetData(), msg); err != nil {
			r.n.refuse("undecodable " + name)
			continue
		}
		var sender *actor.PID
		if si >= 0 && si < len(senders) { // a batch lists no sender for a message only when it has none at all
			sender = senders[si]
		}
		r.e.SendLocal(targets[gi], msg, sender)
	}
}

// refuse counts and logs one message a peer sent that is not delivered.
func (n *Node) refuse(why string) {
	n.refused.Add(1)
	n.log.Warn().Str("why", why).Msg("remote: a peer's message refused")
}
