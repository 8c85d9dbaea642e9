package remote

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/anthdm/hollywood/actor"
	hremote "github.com/anthdm/hollywood/remote"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"storj.io/drpc"
	"storj.io/drpc/drpcconn"
)

// The outbound path of a node: one link per peer address, each a bounded
// queue drained by one goroutine into batches of at most MaxMessage bytes
// on one mutual-TLS connection, in hollywood's wire format (a peer's
// listener, ours or hollywood's, reads them). It replaces hollywood's own
// writer, which batches without a byte
// bound (a burst over the reader's limit resets the connection and is
// lost whole), dials inside its router actor (a dead peer stalls every
// other peer for seconds) and crashes the router when a TLS dial fails.
// What a link cannot deliver it drops and counts: the protocol above it
// (sequence numbers, beats, re-attach, request timeouts) recovers.

// batch is one envelope's worth of queued messages.
type batch struct {
	msgs  []queued
	bytes int
}

// queued is one message, encoded when it was sent.
type queued struct {
	target, sender *actor.PID
	typeName       string
	data           []byte
}

// link is the way to one peer.
type link struct {
	n    *Node
	addr string

	mu      sync.Mutex
	queue   []queued
	bytes   int       // encoded bytes queued
	downTil time.Time // after a failed dial: drop until then
	cur     *conn     // the connection in use, for Stop to cut
	wake    chan struct{}
}

// outbound is the node as hollywood's engine sees its remote: our
// listener and our links, in hollywood's wire format.
type outbound struct {
	n *Node
}

func (o outbound) Address() string                                 { return o.n.cfg.Addr }
func (o outbound) Start(e *actor.Engine) error                     { return o.n.listen(e) }
func (o outbound) Send(pid *actor.PID, msg any, sender *actor.PID) { o.n.send(pid, msg, sender) }

// Stop stops the node; the engine never calls it (Node.Stop does).
func (o outbound) Stop() *sync.WaitGroup {
	o.n.Stop()
	return &sync.WaitGroup{}
}

// send queues msg for pid's node: a value that may not cross is dropped
// and logged (never a crash), a reply over the message limit becomes its
// own failure, anything else over it is dropped.
func (n *Node) send(pid *actor.PID, msg any, sender *actor.PID) {
	if !Allowed(msg) {
		n.drop(pid.Address, fmt.Sprintf("%T is not a message of package messages", msg))
		return
	}
	m := msg.(proto.Message)
	data, err := proto.Marshal(m)
	if err != nil {
		n.drop(pid.Address, "encoding: "+err.Error())
		return
	}
	if len(data) > n.cfg.MaxMessage {
		r, ok := oversizeReply(m, len(data), n.cfg.MaxMessage)
		if !ok {
			n.drop(pid.Address, fmt.Sprintf("%s of %d bytes is over the %d-byte message limit", m.ProtoReflect().Descriptor().Name(), len(data), n.cfg.MaxMessage))
			return
		}
		m = r
		if data, err = proto.Marshal(m); err != nil {
			n.drop(pid.Address, "encoding: "+err.Error())
			return
		}
	}
	n.linkTo(pid.Address).push(queued{target: pid, sender: sender, typeName: string(m.ProtoReflect().Descriptor().FullName()), data: data})
}

// oversizeReply is the reply m stands for, carrying an invalid failure
// instead of its oversize data; false for a message that is not a reply.
func oversizeReply(m proto.Message, size, limit int) (proto.Message, bool) {
	fields := m.ProtoReflect().Descriptor().Fields()
	id, failure := fields.ByName("id"), fields.ByName("failure")
	if id == nil || failure == nil || failure.Message() == nil ||
		failure.Message().FullName() != (&messages.Failure{}).ProtoReflect().Descriptor().FullName() {
		return nil, false
	}
	r := m.ProtoReflect().Type().New()
	r.Set(id, m.ProtoReflect().Get(id))
	f := wire.FailureOf(&paddock.InvalidError{Detail: fmt.Sprintf("remote: the reply is %d bytes, over the %d-byte message limit", size, limit)})
	r.Set(failure, protoreflect.ValueOfMessage(f.ProtoReflect()))
	return r.Interface(), true
}

// drop counts and logs one message that will not be sent.
func (n *Node) drop(addr, why string) {
	n.dropped.Add(1)
	n.log.Warn().Str("peer", addr).Str("why", why).Msg("remote: message dropped")
}

// linkTo returns the link to addr, starting it on first use.
func (n *Node) linkTo(addr string) *link {
	n.mu.Lock()
	defer n.mu.Unlock()
	l, ok := n.links[addr]
	if !ok {
		l = &link{n: n, addr: addr, wake: make(chan struct{}, 1)}
		n.links[addr] = l
		n.wg.Add(1)
		go l.run()
	}
	return l
}

// push queues one message, or drops it when the link is down or its
// queue is full.
func (l *link) push(q queued) {
	l.mu.Lock()
	switch {
	case time.Now().Before(l.downTil):
		l.mu.Unlock()
		l.n.drop(l.addr, "peer unreachable")
		return
	case l.bytes+len(q.data) > l.n.cfg.QueueBytes:
		l.mu.Unlock()
		l.n.drop(l.addr, "queue full")
		return
	}
	l.queue = append(l.queue, q)
	l.bytes += len(q.data)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// next takes the next batch: queued messages, oldest first, up to
// BatchBytes (one message at least).
func (l *link) next() batch {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b batch
	i := 0
	for ; i < len(l.queue); i++ {
		size := len(l.queue[i].data)
		if i > 0 && b.bytes+size > l.n.cfg.MaxMessage {
			break
		}
		b.bytes += size
	}
	b.msgs = append([]queued(nil), l.queue[:i]...)
	clear(l.queue[:i])
	l.queue = l.queue[i:]
	l.bytes -= b.bytes
	return b
}

// fail drops everything queued after a failed dial and refuses new
// messages for a while, so a dead peer costs no queue and no dial per
// message.
func (l *link) fail(err error) {
	l.mu.Lock()
	n := len(l.queue)
	l.queue, l.bytes = nil, 0
	l.downTil = time.Now().Add(redialAfter)
	l.mu.Unlock()
	l.n.dropped.Add(uint64(n))
	l.n.log.Warn().Str("peer", l.addr).Err(err).Int("dropped", n).Msg("remote: peer unreachable")
}

// run drains the queue into batches on a connection it dials when there
// is something to send, until the node stops.
func (l *link) run() {
	defer l.n.wg.Done()
	var c *conn
	defer func() { l.use(nil); c.close() }()
	for {
		select {
		case <-l.n.life.Done():
			return
		case <-l.wake:
		}
		for {
			b := l.next()
			if len(b.msgs) == 0 {
				break
			}
			if c != nil && c.gone() { // the peer closed it (it restarted, say): a write would be lost
				l.use(nil)
				c.close()
				c = nil
			}
			if c == nil {
				var err error
				if c, err = l.dial(); err != nil {
					l.n.dropped.Add(uint64(len(b.msgs)))
					l.fail(err)
					break
				}
				l.use(c)
			}
			if err := c.send(l.n, b); err != nil {
				// The batch is lost, as a reset loses it; the next one
				// dials again.
				l.n.dropped.Add(uint64(len(b.msgs)))
				l.n.log.Warn().Str("peer", l.addr).Err(err).Int("dropped", len(b.msgs)).Msg("remote: connection lost")
				l.use(nil)
				c.close()
				c = nil
			}
		}
	}
}

// use records the connection in use.
func (l *link) use(c *conn) {
	l.mu.Lock()
	l.cur = c
	l.mu.Unlock()
}

// cut closes the connection in use, ending a write blocked on it.
func (l *link) cut() {
	l.mu.Lock()
	c := l.cur
	l.mu.Unlock()
	if c != nil {
		_ = c.raw.Close()
	}
}

// conn is one connection to a peer's listener.
type conn struct {
	raw    net.Conn
	dc     *drpcconn.Conn
	stream hremote.DRPCRemote_ReceiveClient
}

// dial connects to the peer with the node's mutual TLS, bounded by
// dialTimeout and by the node's stop.
func (l *link) dial() (*conn, error) {
	ctx, cancel := context.WithTimeout(l.n.life, dialTimeout)
	defer cancel()
	d := tls.Dialer{Config: l.n.tls}
	raw, err := d.DialContext(ctx, "tcp", l.addr)
	if err != nil {
		return nil, err
	}
	dc := drpcconn.New(raw)
	stream, err := hremote.NewDRPCRemoteClient(dc).Receive(context.Background())
	if err != nil {
		_ = dc.Close()
		return nil, err
	}
	return &conn{raw: raw, dc: dc, stream: stream}, nil
}

// send writes b as one envelope, bounded by the node's write timeout.
func (c *conn) send(n *Node, b batch) error {
	env := envelope(b)
	if drop := n.faults.Load(); drop != nil && (*drop)(env) {
		return errors.New("injected fault: batch dropped")
	}
	if err := c.raw.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return err
	}
	return c.stream.MsgSend(env, envelopeEncoding{})
}

// envelopeEncoding is hollywood's encoding of envelopes (the same bytes),
// but it marshals an envelope straight into drpc's write buffer: hollywood's
// encodes into a buffer of its own, as large as the batch, which drpc then
// copies and drops.
type envelopeEncoding struct{}

func (envelopeEncoding) Marshal(msg drpc.Message) ([]byte, error) {
	return msg.(*hremote.Envelope).MarshalVT()
}

func (envelopeEncoding) Unmarshal(buf []byte, msg drpc.Message) error {
	return msg.(*hremote.Envelope).UnmarshalVT(buf)
}

// MarshalAppend appends msg's encoding to buf (drpc uses it when present).
func (envelopeEncoding) MarshalAppend(buf []byte, msg drpc.Message) ([]byte, error) {
	env := msg.(*hremote.Envelope)
	size := env.SizeVT()
	buf = slices.Grow(buf, size)
	if _, err := env.MarshalToSizedBufferVT(buf[len(buf) : len(buf)+size]); err != nil {
		return nil, err
	}
	return buf[:len(buf)+size], nil
}

// gone reports whether the connection closed under us.
func (c *conn) gone() bool {
	select {
	case <-c.dc.Closed():
		return true
	default:
		return false
	}
}

func (c *conn) close() {
	if c == nil {
		return
	}
	_ = c.stream.Close()
	_ = c.dc.Close()
}

// envelope is b in hollywood's wire format: type names, targets and
// senders listed once, messages pointing at them.
func envelope(b batch) *hremote.Envelope {
	env := &hremote.Envelope{Messages: make([]*hremote.Message, len(b.msgs))}
	types := map[string]int32{}
	pids := func(list *[]*actor.PID, index map[string]int32, pid *actor.PID) int32 {
		key := pid.String()
		i, ok := index[key]
		if !ok {
			i = int32(len(*list))
			index[key] = i
			*list = append(*list, pid)
		}
		return i
	}
	targets, senders := map[string]int32{}, map[string]int32{}
	for i, q := range b.msgs {
		t, ok := types[q.typeName]
		if !ok {
			t = int32(len(env.TypeNames))
			types[q.typeName] = t
			env.TypeNames = append(env.TypeNames, q.typeName)
		}
		m := &hremote.Message{Data: q.data, TypeNameIndex: t, TargetIndex: pids(&env.Targets, targets, q.target)}
		if q.sender != nil {
			m.SenderIndex = pids(&env.Senders, senders, q.sender)
		}
		env.Messages[i] = m
	}
	return env
}
