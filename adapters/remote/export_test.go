package remote

import hremote "github.com/anthdm/hollywood/remote"

// SetFaults makes n drop every batch for which drop answers true, as a
// connection reset would lose it.
func SetFaults(n *Node, drop func(*hremote.Envelope) bool) {
	if drop == nil {
		n.faults.Store(nil)
		return
	}
	n.faults.Store(&drop)
}

// AppendEnvelope is the link's encoding of env appended to buf.
func AppendEnvelope(buf []byte, env *hremote.Envelope) ([]byte, error) {
	return envelopeEncoding{}.MarshalAppend(buf, env)
}

// ParseBatch reads buf as the listener does, as an envelope.
func ParseBatch(buf []byte) (*hremote.Envelope, error) {
	b := &inbound{}
	if err := b.parse(buf); err != nil {
		return nil, err
	}
	env := &hremote.Envelope{TypeNames: b.types, Targets: b.targets, Senders: b.senders}
	for _, m := range b.messages {
		env.Messages = append(env.Messages, &hremote.Message{Data: m.data, TargetIndex: m.target, SenderIndex: m.sender, TypeNameIndex: m.typeIdx})
	}
	return env, nil
}

// Pending is how many connections n holds in their handshake.
func Pending(n *Node) int { return n.gate.Pending() }
