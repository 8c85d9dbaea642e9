package remote_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	hremote "github.com/anthdm/hollywood/remote"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/remote"
	"github.com/paddockhq/paddock/adapters/remote/remotetest"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"storj.io/drpc/drpcconn"
)

// authority is a test certificate authority.
type authority struct{ *remotetest.Authority }

func newAuthority(t *testing.T) authority {
	t.Helper()
	a, err := remotetest.NewAuthority("paddock test CA")
	require.NoError(t, err)
	return authority{a}
}

// node issues a certificate for 127.0.0.1, for server and client use.
func (a authority) node(t *testing.T) tls.Certificate {
	t.Helper()
	cert, err := a.Issue("127.0.0.1")
	require.NoError(t, err)
	return cert
}

// mutual is the mutual TLS of a node with cert, trusting a.
func (a authority) mutual(cert tls.Certificate) *tls.Config { return a.Mutual(cert) }

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func startNode(t *testing.T, tlsConfig *tls.Config) *remote.Node {
	t.Helper()
	n, err := remote.StartNode(remote.NodeConfig{Addr: freeAddr(t), TLS: tlsConfig})
	require.NoError(t, err)
	t.Cleanup(n.Stop)
	return n
}

// startRuntime starts a runtime on e over provider p's adapter a, without
// reaps or leases, shut down when the test ends; tweaks change its
// configuration.
func startRuntime(t *testing.T, e *actor.Engine, p paddock.Provider, a paddock.Adapter, tweaks ...func(*actors.Config)) *actors.Runtime {
	t.Helper()
	cfg := actors.Config{Adapters: paddock.Registry{p: a}, Engine: e, ReapInterval: -1, Lease: -1}
	for _, tweak := range tweaks {
		tweak(&cfg)
	}
	rt, err := actors.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
	})
	return rt
}

// serve runs a runtime over the fake on n, and returns the fake.
func serve(t *testing.T, n *remote.Node) (*actors.Runtime, *fake.Adapter) {
	t.Helper()
	f := fake.New()
	return startRuntime(t, n.Engine, paddock.ProviderFake, f), f
}

func TestConfigRefusesAnythingButMutualTLS(t *testing.T) {
	t.Parallel()
	ca := newAuthority(t)
	good := ca.mutual(ca.node(t))
	oneWay := good.Clone()
	oneWay.ClientAuth = tls.NoClientCert
	noCAs := good.Clone()
	noCAs.ClientCAs = nil
	noCert := good.Clone()
	noCert.Certificates = nil
	skip := good.Clone()
	skip.InsecureSkipVerify = true
	cases := []struct {
		name string
		cfg  remote.NodeConfig
	}{
		{"plaintext", remote.NodeConfig{Addr: "127.0.0.1:4000"}},
		{"no client certificates asked", remote.NodeConfig{Addr: "127.0.0.1:4000", TLS: oneWay}},
		{"no authority for clients", remote.NodeConfig{Addr: "127.0.0.1:4000", TLS: noCAs}},
		{"no certificate of its own", remote.NodeConfig{Addr: "127.0.0.1:4000", TLS: noCert}},
		{"verification off", remote.NodeConfig{Addr: "127.0.0.1:4000", TLS: skip}},
		{"an address peers cannot answer", remote.NodeConfig{Addr: ":4000", TLS: good}},
		{"the unspecified address", remote.NodeConfig{Addr: "0.0.0.0:4000", TLS: good}},
		{"no port", remote.NodeConfig{Addr: "127.0.0.1", TLS: good}},
		{"a negative buffer", remote.NodeConfig{Addr: "127.0.0.1:4000", TLS: good, BufferSize: -1}},
	}
	for _, c := range cases {
		_, err := remote.StartNode(c.cfg)
		require.ErrorIs(t, err, paddock.ErrInvalid, c.name)
	}
}

func TestOnlyMessagesCross(t *testing.T) {
	t.Parallel()
	assert.True(t, remote.Allowed(&messages.GetRequest{}))
	assert.True(t, remote.Allowed(&messages.Stdout{Data: []byte("x")}))
	for name, v := range map[string]any{
		"nil":                        nil,
		"a typed nil":                (*messages.GetRequest)(nil),
		"a string":                   "hello",
		"a struct":                   struct{ A int }{1},
		"a message value, not a ptr": messages.GetRequest{}, //nolint:govet // the point: a value is refused
		"another package's message":  &actor.PID{Address: "a", ID: "b"},
	} {
		assert.False(t, remote.Allowed(v), name)
	}
	e, err := actor.NewEngine(actor.NewEngineConfig())
	require.NoError(t, err)
	err = remote.Send(e, actor.NewPID("127.0.0.1:1", "x"), "not a message", nil)
	require.ErrorIs(t, err, paddock.ErrInvalid)
}

// A node with a certificate from the authority drives another node's
// runtime; a peer without one, or with one from another authority, can
// neither send it a request nor get an answer: its connections reach the
// serving node and the TLS handshake refuses them.
func TestNodesAuthenticateEachOther(t *testing.T) {
	t.Parallel()
	ca := newAuthority(t)
	var hellos atomic.Int32
	servingTLS := ca.mutual(ca.node(t))
	servingTLS.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) { hellos.Add(1); return nil, nil }
	serving := startNode(t, servingTLS)
	rt, _ := serve(t, serving)
	driving := startNode(t, ca.mutual(ca.node(t)))

	ctx := context.Background()
	res, err := driving.Engine.Request(rt.PID(), &messages.CreateRequest{Id: "r1", Provider: string(paddock.ProviderFake), Name: "box"}, 30*time.Second).Result()
	require.NoError(t, err)
	reply, ok := res.(*messages.CreateReply)
	require.True(t, ok, "%T", res)
	assert.Nil(t, reply.GetFailure())
	_, err = rt.Adapter(paddock.ProviderFake).Get(ctx, paddock.Handle{Provider: paddock.ProviderFake, Name: "box"})
	require.NoError(t, err, "the authenticated peer's create reached the runtime")

	rogueCA := newAuthority(t)
	for name, tlsConfig := range map[string]*tls.Config{
		"a certificate from another authority": rogueCA.mutual(rogueCA.node(t)),
		"no certificate, trusting the server": {RootCAs: ca.Pool, // it presents none when it dials
			GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { // (hollywood listens with it too)
				return rogueCA.mutual(rogueCA.node(t)), nil
			}},
	} {
		// An attacker's node: hollywood's remote as is, not this package
		// (which would refuse its configuration).
		r := hremote.New(freeAddr(t), hremote.NewConfig().WithTLS(tlsConfig))
		e, err := actor.NewEngine(actor.NewEngineConfig().WithRemote(r))
		require.NoError(t, err)
		t.Cleanup(func() { r.Stop().Wait() })
		before := hellos.Load()
		_, err = e.Request(rt.PID(), &messages.CreateRequest{Id: "r2", Provider: string(paddock.ProviderFake), Name: "intruder"}, 5*time.Second).Result()
		require.Error(t, err, "%s: no answer", name)
		require.Eventually(t, func() bool { return hellos.Load() > before }, time.Minute, 10*time.Millisecond,
			"%s: its connection reached the serving node", name)
		_, err = rt.Adapter(paddock.ProviderFake).Get(ctx, paddock.Handle{Provider: paddock.ProviderFake, Name: "intruder"})
		assert.ErrorIs(t, err, paddock.ErrNotFound, "%s: the handshake refused it, so no request reached the runtime", name)
	}
}

// counter is an owner actor that counts what it receives and credits
// only when told.
type counter struct {
	mu       sync.Mutex
	bytes    int
	frames   int
	largest  int
	terminal messages.Frame
	cmd      *actor.PID
	ref      string
}

func (o *counter) Receive(c *actor.Context) {
	f, ok := c.Message().(messages.Frame)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cmd, o.ref = c.Sender(), f.GetRef()
	if out, ok := f.(*messages.Stdout); ok {
		o.frames++
		o.bytes += len(out.GetData())
		o.largest = max(o.largest, len(out.GetData()))
		return
	}
	o.terminal = f
}

func (o *counter) seen() (bytes, frames, largest int, terminal messages.Frame) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.bytes, o.frames, o.largest, o.terminal
}

// The bytes of frames in flight to another node stay within the serving
// runtime's link window while the owner grants nothing (whatever frame
// window it asked for), no frame carries more than RemoteFrameMax, and
// credits give the window back until the command's output is all through.
func TestLinkWindowBoundsBytesInFlight(t *testing.T) {
	t.Parallel()
	const window = 256 << 10
	p := newPair(t, 0, func(c *actors.Config) { c.LinkWindow = window })
	h, err := p.rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	chunk := strings.Repeat("x", 100<<10)
	args := []string{}
	for range 40 {
		args = append(args, "out:"+chunk)
	}
	owner := &counter{}
	pid := p.driving.Engine.Spawn(func() actor.Receiver { return owner }, "owner")
	t.Cleanup(func() { <-p.driving.Engine.Poison(pid).Done() })
	require.NoError(t, remote.Send(p.driving.Engine, p.rt.PID(), &messages.SpawnRequest{Id: "s1", Handle: &messages.Handle{Provider: "fake", Name: h.Name},
		Cmd: &messages.Cmd{Path: "emit", Args: args}, Detachable: true, Owner: messages.PidOf(pid), Window: 1000}, pid))

	require.Eventually(t, func() bool { return p.gauge(t, "paddock_commands_waiting_for_credit") == 1 }, 30*time.Second, 5*time.Millisecond,
		"the command waits for room on the link")
	require.Eventually(t, func() bool { b, _, _, _ := owner.seen(); return b >= window-actors.RemoteFrameMax }, 30*time.Second, 5*time.Millisecond,
		"what was sent arrives")
	got, _, largest, _ := owner.seen()
	assert.LessOrEqual(t, got, window, "no more than the link window in flight")
	assert.LessOrEqual(t, largest, actors.RemoteFrameMax, "frames of at most RemoteFrameMax")

	credited := 0
	for { // credit what arrived until the exit
		got, n, _, term := owner.seen()
		if term != nil {
			assert.IsType(t, &messages.Exit{}, term)
			assert.Equal(t, 40*len(chunk), got, "all of it, once the owner credits")
			break
		}
		if n > credited {
			owner.mu.Lock()
			cmd, ref := owner.cmd, owner.ref
			owner.mu.Unlock()
			require.NoError(t, remote.Send(p.driving.Engine, cmd, &messages.Credit{Ref: ref, N: uint32(n - credited)}, pid))
			credited = n
		}
		require.Eventually(t, func() bool { _, m, _, term := owner.seen(); return m > n || term != nil }, 30*time.Second, time.Millisecond)
	}
}

// What cannot cross is refused with a typed error or dropped and counted,
// never a crash: a file over the message limit either way, a value that is
// not a message.
func TestMessageLimits(t *testing.T) {
	t.Parallel()
	p := newPair(t, 0)
	h, err := p.rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	big := bytes.Repeat([]byte("y"), remote.DefaultMaxMessage+1)
	require.NoError(t, p.rt.Adapter(h.Provider).WriteFile(ctx, h, "/big", 0o644, bytes.NewReader(big)))

	_, err = p.adapter.ReadFile(ctx, h, "/big")
	require.ErrorIs(t, err, paddock.ErrInvalid, "a reply over the limit crosses as its own failure")
	assert.Contains(t, err.Error(), "message limit")

	err = p.adapter.WriteFile(ctx, h, "/copy", 0o644, bytes.NewReader(big))
	require.ErrorIs(t, err, paddock.ErrInvalid, "a file over the limit is refused before it is sent")
	_, err = p.rt.Adapter(h.Provider).ReadFile(ctx, h, "/copy")
	require.ErrorIs(t, err, paddock.ErrNotFound, "nothing was written")

	before := p.driving.Dropped()
	p.driving.Engine.Send(actor.NewPID(p.serving.Addr(), "anyone"), "not a message")
	assert.Equal(t, before+1, p.driving.Dropped(), "dropped and counted, and the process lives")
}

// A peer without the authority's certificate cannot receive a frame
// either: a spawn whose owner it is (named by an authenticated node)
// never reaches it, since the serving node's dial fails the handshake.
func TestRoguePeerReceivesNoFrame(t *testing.T) {
	t.Parallel()
	p := newPair(t, 0)
	h, err := p.rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	rogueCA := newAuthority(t)
	r := hremote.New(freeAddr(t), hremote.NewConfig().WithTLS(rogueCA.mutual(rogueCA.node(t))))
	e, err := actor.NewEngine(actor.NewEngineConfig().WithRemote(r))
	require.NoError(t, err)
	t.Cleanup(func() { r.Stop().Wait() })
	var received atomic.Int32
	rogue := e.SpawnFunc(func(c *actor.Context) {
		if _, ok := c.Message().(messages.Frame); ok {
			received.Add(1)
		}
	}, "owner")

	before := p.serving.Dropped()
	s, _, err := p.rt.SpawnTo(ctx, rogue, h, paddock.NewCmd("emit", "out:secret", "stay"), paddock.SpawnOpts{Detachable: true}, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.rt.Controls(s).Stop(ctx) })
	require.Eventually(t, func() bool { return p.serving.Dropped() > before }, 30*time.Second, 5*time.Millisecond,
		"the serving node could not deliver to the rogue peer")
	assert.Zero(t, received.Load(), "no frame reached it")
}

// A peer's batch is checked message by message: what is not a message of
// package messages, does not decode, or points outside its batch is
// refused and counted; the rest of the batch, and the connection, live.
func TestPeersMessagesAreChecked(t *testing.T) {
	t.Parallel()
	ca := newAuthority(t)
	serving := startNode(t, ca.mutual(ca.node(t)))
	var got atomic.Int32
	target := serving.Engine.SpawnFunc(func(c *actor.Context) {
		if _, ok := c.Message().(*messages.GetRequest); ok {
			got.Add(1)
		}
	}, "target")
	t.Cleanup(func() { <-serving.Engine.Poison(target).Done() })

	conf := ca.mutual(ca.node(t))
	raw, err := tls.Dial("tcp", serving.Addr(), conf)
	require.NoError(t, err)
	dc := drpcconn.New(raw)
	t.Cleanup(func() { _ = dc.Close() })
	stream, err := hremote.NewDRPCRemoteClient(dc).Receive(ctx)
	require.NoError(t, err)
	good, err := proto.Marshal(&messages.GetRequest{Id: "g"})
	require.NoError(t, err)
	pid, err := proto.Marshal(&actor.PID{Address: "x", ID: "y"})
	require.NoError(t, err)
	before := serving.Refused()
	send := func() {
		require.NoError(t, stream.Send(&hremote.Envelope{
			TypeNames: []string{"paddock.messages.v1.GetRequest", "actor.PID"},
			Targets:   []*actor.PID{target},
			Messages: []*hremote.Message{
				{Data: pid, TypeNameIndex: 1},                  // another package's message
				{Data: []byte{0xff, 0xff, 0xff}},               // undecodable
				{Data: good, TargetIndex: 5},                   // no such target
				{Data: good, TypeNameIndex: 7},                 // no such type
				{Data: good, TypeNameIndex: 0, TargetIndex: 0}, // delivered
			},
		}))
	}
	send()
	send() // the connection lives on
	require.Eventually(t, func() bool { return got.Load() == 2 }, 30*time.Second, 5*time.Millisecond, "the good messages arrive")
	require.Eventually(t, func() bool { return serving.Refused() == before+8 }, 30*time.Second, 5*time.Millisecond)
}

// A request whose reply does not come is unavailable (or, for stdin,
// write_failed) and says its context ended, so a runtime that ended it
// itself (a command's exit cancels its stdin writes) can tell.
func TestUnansweredRequestsSayTheirContextEnded(t *testing.T) {
	t.Parallel()
	p := newPair(t, 0)
	h, err := p.adapter.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	s, err := p.adapter.Spawn(ctx, h, paddock.NewCmd("emit", "out:hi", "stay"), paddock.SpawnOpts{Stdin: true, Detachable: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	remote.SetFaults(p.serving, func(*hremote.Envelope) bool { return true })
	t.Cleanup(func() { remote.SetFaults(p.serving, nil) })

	short := func() context.Context {
		c, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		t.Cleanup(cancel)
		return c
	}
	err = s.CloseStdin(short())
	require.ErrorIs(t, err, paddock.ErrWriteFailed)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	err = s.WriteStdin(short(), []byte("x"))
	require.ErrorIs(t, err, paddock.ErrWriteFailed)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	_, err = p.adapter.Get(short(), h)
	require.ErrorIs(t, err, paddock.ErrUnavailable)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// The link marshals envelopes straight into drpc's buffer; the bytes are
// hollywood's own encoding, after whatever the buffer held.
func TestEnvelopesAreHollywoodsBytes(t *testing.T) {
	t.Parallel()
	env := &hremote.Envelope{
		TypeNames: []string{"paddock.messages.v1.Stdout"},
		Targets:   []*actor.PID{actor.NewPID("127.0.0.1:1", "owner/1")},
		Senders:   []*actor.PID{actor.NewPID("127.0.0.1:2", "command/1")},
		Messages: []*hremote.Message{
			{Data: bytes.Repeat([]byte{7}, 32<<10)},
			{Data: []byte("x"), TypeNameIndex: 0, TargetIndex: 0, SenderIndex: 0},
		},
	}
	want, err := env.MarshalVT()
	require.NoError(t, err)
	for _, prefix := range [][]byte{nil, []byte("kept"), make([]byte, 3, 1<<20)} {
		head := append([]byte(nil), prefix...)
		got, err := remote.AppendEnvelope(prefix, env) // the last prefix has room to grow in place
		require.NoError(t, err)
		require.Equal(t, append(head, want...), got)
		var back hremote.Envelope
		require.NoError(t, back.UnmarshalVT(got[len(prefix):]))
		require.True(t, back.EqualVT(env))
	}
}

// The listener reads a batch where drpc read it; it must read what
// hollywood's decoding reads, and refuse what that refuses.
func TestBatchesParseAsHollywoodReadsThem(t *testing.T) {
	t.Parallel()
	full := &hremote.Envelope{
		TypeNames: []string{"paddock.messages.v1.Stdout", "paddock.messages.v1.Exit"},
		Targets:   []*actor.PID{actor.NewPID("127.0.0.1:1", "owner/1"), actor.NewPID("127.0.0.1:1", "owner/2")},
		Senders:   []*actor.PID{actor.NewPID("127.0.0.1:2", "command/1")},
		Messages: []*hremote.Message{
			{Data: bytes.Repeat([]byte{7}, 70000), TargetIndex: 1},
			{Data: []byte("x"), TypeNameIndex: 1, TargetIndex: -1, SenderIndex: 2},
			{},
		},
	}
	encoded := func(env *hremote.Envelope) []byte {
		b, err := env.MarshalVT()
		require.NoError(t, err)
		return b
	}
	withUnknown := append(encoded(full), protowire.AppendTag(nil, 9, protowire.VarintType)...)
	withUnknown = protowire.AppendVarint(withUnknown, 5)
	withUnknown = append(protowire.AppendBytes(protowire.AppendTag(nil, 12, protowire.BytesType), []byte("later")), withUnknown...)
	good := map[string][]byte{
		"a full batch":           encoded(full),
		"an empty batch":         nil,
		"unknown fields skipped": withUnknown,
		"a message without data": encoded(&hremote.Envelope{Messages: []*hremote.Message{{TargetIndex: 3}}}),
		"only names and targets": encoded(&hremote.Envelope{TypeNames: []string{"a"}, Targets: full.Targets}),
	}
	for name, buf := range good {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var want hremote.Envelope
			require.NoError(t, want.UnmarshalVT(buf))
			got, err := remote.ParseBatch(buf)
			require.NoError(t, err)
			// field by field: hollywood's decoding keeps unknown fields, the listener skips them
			require.Equal(t, want.GetTypeNames(), got.GetTypeNames())
			for _, pair := range [][2][]*actor.PID{{want.GetTargets(), got.GetTargets()}, {want.GetSenders(), got.GetSenders()}} {
				require.Len(t, pair[1], len(pair[0]))
				for i := range pair[0] {
					require.True(t, pair[0][i].EqualVT(pair[1][i]))
				}
			}
			require.Len(t, got.GetMessages(), len(want.GetMessages()))
			for i, m := range want.GetMessages() {
				require.True(t, m.EqualVT(got.GetMessages()[i]), "message %d", i)
			}
		})
	}
	bad := map[string][]byte{
		"a truncated batch":                encoded(full)[:100],
		"a tag and nothing else":           protowire.AppendTag(nil, 4, protowire.BytesType),
		"messages as a varint":             protowire.AppendVarint(protowire.AppendTag(nil, 4, protowire.VarintType), 1),
		"a message whose data is a varint": protowire.AppendBytes(protowire.AppendTag(nil, 4, protowire.BytesType), protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1)),
		"a target that is not a PID":       protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), []byte{0xff}),
	}
	for name, buf := range bad {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var want hremote.Envelope
			require.Error(t, want.UnmarshalVT(buf), "hollywood refuses it too")
			_, err := remote.ParseBatch(buf)
			require.Error(t, err)
		})
	}
}

// FuzzParseBatch: whatever both hollywood's decoding and the reference
// protobuf decoding read as an envelope, the listener reads the same way.
// (They differ in corners the listener may refuse: hollywood's skips a
// group whose end names another field, the reference keeps a known field
// of the wrong wire type as unknown; the listener refuses both, as one of
// them does.)
func FuzzParseBatch(f *testing.F) {
	env := &hremote.Envelope{
		TypeNames: []string{"paddock.messages.v1.Stdout"},
		Targets:   []*actor.PID{actor.NewPID("127.0.0.1:1", "owner/1")},
		Senders:   []*actor.PID{actor.NewPID("127.0.0.1:2", "command/1")},
		Messages:  []*hremote.Message{{Data: []byte("hello"), SenderIndex: -1}},
	}
	seed, err := env.MarshalVT()
	require.NoError(f, err)
	f.Add(seed)
	f.Add([]byte{})
	f.Add(seed[:len(seed)/2])
	f.Fuzz(func(t *testing.T, buf []byte) {
		var want, reference hremote.Envelope
		if want.UnmarshalVT(buf) != nil || proto.Unmarshal(buf, &reference) != nil {
			return
		}
		got, err := remote.ParseBatch(buf)
		require.NoError(t, err, "both decodings read it")
		require.Equal(t, want.GetTypeNames(), got.GetTypeNames())
		require.Len(t, got.GetTargets(), len(want.GetTargets()))
		require.Len(t, got.GetSenders(), len(want.GetSenders()))
		require.Len(t, got.GetMessages(), len(want.GetMessages()))
		for i, m := range want.GetMessages() {
			g := got.GetMessages()[i]
			require.Equal(t, m.GetData(), g.GetData())
			require.Equal(t, [3]int32{m.GetTargetIndex(), m.GetSenderIndex(), m.GetTypeNameIndex()}, [3]int32{g.GetTargetIndex(), g.GetSenderIndex(), g.GetTypeNameIndex()})
		}
	})
}

// Connections that never speak cost a node a bounded number of sockets
// for a bounded time: of 300 silent connections at most
// MaxPendingPerSource wait in their handshake, the oldest closed as new
// ones come and the rest at their handshake's deadline, while a peer that
// proves itself is served all along; then nothing is held.
func TestSilentConnectionsAreHeldOff(t *testing.T) {
	t.Parallel()
	ca := newAuthority(t)
	serving, err := remote.StartNode(remote.NodeConfig{Addr: freeAddr(t), TLS: ca.mutual(ca.node(t)),
		HandshakeTimeout: 2 * time.Second, MaxPending: 16, MaxPendingPerSource: 8})
	require.NoError(t, err)
	t.Cleanup(serving.Stop)
	rt, _ := serve(t, serving)
	driving := startNode(t, ca.mutual(ca.node(t)))

	silent := make([]net.Conn, 300)
	for i := range silent {
		c, err := net.Dial("tcp", serving.Addr())
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		silent[i] = c
		require.LessOrEqual(t, remote.Pending(serving), 8, "at most MaxPendingPerSource wait")
	}
	res, err := driving.Engine.Request(rt.PID(), &messages.CreateRequest{Id: "r1", Provider: string(paddock.ProviderFake), Name: "box"}, time.Minute).Result()
	require.NoError(t, err, "a peer that proves itself is served during the flood")
	reply, ok := res.(*messages.CreateReply)
	require.True(t, ok, "%T", res)
	require.Nil(t, reply.GetFailure())

	buf := make([]byte, 1)
	for i, c := range silent {
		require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Minute))) // a hang bound: the node closes each long before
		_, err := c.Read(buf)
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "silent connection %d was never closed", i)
		require.Error(t, err)
	}
	require.Eventually(t, func() bool { return remote.Pending(serving) == 0 }, time.Minute, 10*time.Millisecond, "no handshake is left")
}
