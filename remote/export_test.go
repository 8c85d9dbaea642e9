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
