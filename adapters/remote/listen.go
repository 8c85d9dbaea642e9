package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/anthdm/hollywood/actor"
	hremote "github.com/anthdm/hollywood/remote"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"storj.io/drpc"
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
	raw, err := net.Listen("tcp", n.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listening at %s: %w", n.cfg.Addr, err)
	}
	ln := newGate(raw, n.tls, n.cfg.HandshakeTimeout, n.cfg.MaxPending, n.cfg.MaxPendingPerSource, n.log)
	n.gate = ln
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
	b := &inbound{r: r}
	for {
		if err := stream.MsgRecv(b, batchEncoding{}); err != nil {
			return nil // the peer closed or lost the connection (or sent a batch that does not parse); it dials again
		}
	}
}

// batchEncoding reads an envelope where drpc read it and delivers its
// messages before drpc reuses the buffer: each message's bytes are decoded
// once, into its type of package messages, where hollywood's envelope
// decoding first copies every message's bytes out. It reads hollywood's
// wire format (remote.proto: Envelope{typeNames=1, targets=2, senders=3,
// messages=4}, Message{data=1, targetIndex=2, senderIndex=3,
// typeNameIndex=4}).
type batchEncoding struct{}

func (batchEncoding) Marshal(drpc.Message) ([]byte, error) {
	return nil, errors.New("remote: a listener sends nothing")
}

func (batchEncoding) Unmarshal(buf []byte, msg drpc.Message) error {
	b := msg.(*inbound)
	if err := b.parse(buf); err != nil {
		return err
	}
	b.deliver()
	return nil
}

// inbound is one batch being read; its slices are reused batch to batch,
// and its messages' data alias the buffer drpc read them into.
type inbound struct {
	r        receiver
	types    []string
	targets  []*actor.PID
	senders  []*actor.PID
	messages []inboundMessage
}

// inboundMessage is one message of a batch.
type inboundMessage struct {
	data                    []byte
	target, sender, typeIdx int32
}

// parse reads an envelope's fields; unknown fields are skipped, a known
// one of the wrong wire type or a truncated field is an error.
func (b *inbound) parse(buf []byte) error {
	b.types, b.targets, b.senders, b.messages = b.types[:0], b.targets[:0], b.senders[:0], b.messages[:0]
	return eachField(buf, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num < 1 || num > 4 {
			return nil
		}
		if typ != protowire.BytesType {
			return errMalformed
		}
		switch num {
		case 1:
			b.types = append(b.types, string(v))
		case 2, 3:
			pid := &actor.PID{}
			if err := pid.UnmarshalVT(v); err != nil {
				return err
			}
			if num == 2 {
				b.targets = append(b.targets, pid)
			} else {
				b.senders = append(b.senders, pid)
			}
		case 4:
			m, err := parseMessage(v)
			if err != nil {
				return err
			}
			b.messages = append(b.messages, m)
		}
		return nil
	})
}

// parseMessage reads one Message: its data (aliased) and three indices.
func parseMessage(buf []byte) (inboundMessage, error) {
	var m inboundMessage
	err := eachField(buf, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			m.data = v
		case num >= 2 && num <= 4 && typ == protowire.VarintType:
			i := int32(x) // proto's int32: a negative one is a ten-byte varint
			switch num {
			case 2:
				m.target = i
			case 3:
				m.sender = i
			case 4:
				m.typeIdx = i
			}
		case num >= 1 && num <= 4:
			return errMalformed
		}
		return nil
	})
	return m, err
}

// errMalformed is a batch whose fields do not parse.
var errMalformed = errors.New("remote: a malformed batch")

// eachField calls f with each field of buf: its number, wire type, and
// its bytes (length-delimited) or value (varint).
func eachField(buf []byte, f func(protowire.Number, protowire.Type, []byte, uint64) error) error {
	for len(buf) > 0 {
		num, typ, n := protowire.ConsumeTag(buf)
		if n < 0 {
			return errMalformed
		}
		buf = buf[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(buf)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(buf)
		default:
			n = protowire.ConsumeFieldValue(num, typ, buf)
		}
		if n < 0 {
			return errMalformed
		}
		buf = buf[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// deliver sends each message of the batch to its local target.
func (b *inbound) deliver() {
	r := b.r
	for _, m := range b.messages {
		ti, gi, si := int(m.typeIdx), int(m.target), int(m.sender)
		if ti < 0 || ti >= len(b.types) || gi < 0 || gi >= len(b.targets) {
			r.n.refuse("a message pointing outside its batch")
			continue
		}
		name := b.types[ti]
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
		if err := proto.Unmarshal(m.data, msg); err != nil { // copies what it keeps: m.data is drpc's buffer
			r.n.refuse("undecodable " + name)
			continue
		}
		var sender *actor.PID
		if si >= 0 && si < len(b.senders) { // a batch lists no sender for a message only when it has none at all
			sender = b.senders[si]
		}
		r.e.SendLocal(b.targets[gi], msg, sender)
	}
}

// refuse counts and logs one message a peer sent that is not delivered.
func (n *Node) refuse(why string) {
	n.refused.Add(1)
	n.log.Warn().Str("why", why).Msg("remote: a peer's message refused")
}
