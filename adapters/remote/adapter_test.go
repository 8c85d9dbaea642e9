package remote_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hremote "github.com/anthdm/hollywood/remote"
	"github.com/paddockhq/paddock/messages"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/adapters/remote"
	"github.com/paddockhq/paddock/conformance"
	"github.com/paddockhq/paddock/fake"
	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

// pair is a serving node running a runtime over the fake, and a driving
// node with an adapter for it.
type pair struct {
	serving, driving *remote.Node
	rt               *actors.Runtime
	fake             *fake.Adapter
	adapter          *remote.Adapter
	metrics          *prometheus.Registry // the serving runtime's
}

// liveCommands is how many subscriptions the serving runtime holds.
func (p *pair) liveCommands(t *testing.T) int { return p.gauge(t, "paddock_commands_live") }

// gauge sums a gauge of the serving runtime.
func (p *pair) gauge(t *testing.T, name string) int {
	t.Helper()
	families, err := p.metrics.Gather()
	require.NoError(t, err)
	n := 0.0
	for _, f := range families {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				n += m.GetGauge().GetValue()
			}
		}
	}
	return int(n)
}

// newPair starts both nodes with certificates from one authority; lease
// is the remote lease of both sides (0 = the default); tweaks change the
// serving runtime's configuration.
func newPair(t *testing.T, lease time.Duration, tweaks ...func(*actors.Config)) *pair {
	t.Helper()
	ca := newAuthority(t)
	p := &pair{serving: startNode(t, ca.mutual(ca.node(t))), driving: startNode(t, ca.mutual(ca.node(t)))}
	p.serve(t, lease, tweaks...)
	a, err := remote.New(remote.Config{Node: p.driving, Peer: p.serving.Addr(), Provider: paddock.ProviderFake, Lease: lease})
	require.NoError(t, err)
	t.Cleanup(a.Close)
	p.adapter = a
	return p
}

// serve starts the serving runtime over a fresh fake, with metrics.
func (p *pair) serve(t *testing.T, lease time.Duration, tweaks ...func(*actors.Config)) {
	t.Helper()
	p.fake = fake.New()
	t.Cleanup(p.fake.Reset) // after the runtime's shutdown
	p.metrics = prometheus.NewRegistry()
	p.rt = startRuntime(t, p.serving.Engine, paddock.ProviderFake, p.fake, append([]func(*actors.Config){func(c *actors.Config) {
		c.RemoteLease, c.Metrics = lease, p.metrics
	}}, tweaks...)...)
}

// The remote adapter keeps the contract: the conformance suite against
// the fake served by another node, raw and through this node's runtime.
func TestConformanceAcrossNodes(t *testing.T) {
	t.Parallel()
	p := newPair(t, 0)
	// The load case runs through the driving runtime below, which calls
	// every operation of the adapter the way the raw case would.
	conformance.Run(t, conformance.Config{Adapter: p.adapter, Fixtures: conformance.FakeFixtures(), Except: []string{conformance.LoadCase}})
}

func TestConformanceAcrossNodesThroughTheRuntime(t *testing.T) {
	t.Parallel()
	p := newPair(t, 0)
	rt := p.driveRuntime(t)
	conformance.RunRuntime(t, rt, paddock.ProviderFake, conformance.Config{Fixtures: conformance.FakeFixtures()})
}

// driveRuntime starts a runtime on p's driving node over its adapter.
func (p *pair) driveRuntime(t *testing.T) *actors.Runtime {
	t.Helper()
	return startRuntime(t, p.driving.Engine, paddock.ProviderFake, p.adapter)
}

// collect reads a stream's frames to the end: stdout and stderr, and the
// terminal frames.
func collect(t *testing.T, st paddock.Stream, within time.Duration) (stdout, stderr []byte, terminals []messages.Frame) {
	s := st.(*actors.FrameStream) // the runtime's streams are FrameStreams
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case f, ok := <-s.C():
			if !ok {
				return stdout, stderr, terminals
			}
			switch f := f.(type) {
			case *messages.Stdout:
				stdout = append(stdout, f.GetData()...)
			case *messages.Stderr:
				stderr = append(stderr, f.GetData()...)
			default:
				terminals = append(terminals, f)
			}
		case <-timeout:
			t.Fatalf("the stream did not end within %s", within)
		}
	}
}

// A link that loses batches (here 5% of them, replies and frames alike
// after the spawn) costs the owner nothing: every byte once, in order,
// and one terminal frame.
func TestLostBatchesAreReplayed(t *testing.T) {
	t.Parallel()
	p := newPair(t, 3*time.Second)
	rt := p.driveRuntime(t)
	h, err := rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)

	args := []string{}
	var wantOut, wantErr []byte
	for i := range 3000 {
		chunk := fmt.Sprintf("%05d:%s|", i, strings.Repeat(string(rune('a'+i%26)), 200+i%700))
		if i%7 == 0 {
			args = append(args, "err:"+chunk)
			wantErr = append(wantErr, chunk...)
			continue
		}
		args = append(args, "out:"+chunk)
		wantOut = append(wantOut, chunk...)
	}
	args = append(args, "exit:3")
	var batches, dropped atomic.Int64
	rnd := rand.New(rand.NewPCG(1, 2))
	var mu sync.Mutex
	remote.SetFaults(p.serving, func(*hremote.Envelope) bool {
		batches.Add(1)
		mu.Lock()
		defer mu.Unlock()
		if rnd.IntN(100) < 5 {
			dropped.Add(1)
			return true
		}
		return false
	})
	s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.NewCmd("emit", args...), paddock.SpawnOpts{Detachable: true})
	require.NoError(t, err)
	stdout, stderr, terminals := collect(t, s, 2*time.Minute)
	require.Len(t, terminals, 1, "one terminal frame")
	exit, ok := terminals[0].(*messages.Exit)
	require.True(t, ok, "the exit, not %v", terminals[0])
	assert.EqualValues(t, 3, exit.GetCode())
	assert.Equal(t, string(wantOut), string(stdout), "every stdout byte once, in order")
	assert.Equal(t, string(wantErr), string(stderr), "every stderr byte once, in order")
	t.Logf("%d batches, %d dropped", batches.Load(), dropped.Load())
	require.Positive(t, dropped.Load(), "the link lost batches")
}

// A serving node gone silent ends each subscription with exactly one
// Error{node_lost}, within the lease.
func TestSilentServingNodeIsLost(t *testing.T) {
	t.Parallel()
	lease := 3 * time.Second
	p := newPair(t, lease)
	rt := p.driveRuntime(t)
	h, err := rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	var streams []paddock.Stream
	for range 3 {
		s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.NewCmd("emit", "out:hello", "stay"), paddock.SpawnOpts{Detachable: true})
		require.NoError(t, err)
		f := <-s.(*actors.FrameStream).C()
		require.IsType(t, &messages.Stdout{}, f)
		streams = append(streams, s)
	}
	remote.SetFaults(p.serving, func(*hremote.Envelope) bool { return true })
	silent := time.Now()
	for _, s := range streams {
		_, _, terminals := collect(t, s, 2*lease)
		require.Len(t, terminals, 1)
		e, ok := terminals[0].(*messages.Error)
		require.True(t, ok, "%v", terminals[0])
		assert.Equal(t, remote.ReasonNodeLost, e.GetReason())
	}
	assert.LessOrEqual(t, time.Since(silent), lease, "node_lost within the lease")
}

// An owner node gone silent loses its subscriptions on the serving node
// within the lease; the commands keep running and stay attachable.
func TestSilentOwnerNodeIsDetached(t *testing.T) {
	t.Parallel()
	lease := 3 * time.Second
	p := newPair(t, lease)
	rt := p.driveRuntime(t)
	h, err := rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.NewCmd("emit", "out:hello", "stay"), paddock.SpawnOpts{Detachable: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.IsType(t, &messages.Stdout{}, <-s.(*actors.FrameStream).C())
	sh := paddock.Handle{Provider: paddock.ProviderFake, Name: "box"}
	sessions, err := p.rt.Adapter(sh.Provider).ListSessions(ctx, sh)
	require.NoError(t, err)
	require.Len(t, sessions, 1)
	require.Equal(t, 1, p.liveCommands(t), "the serving node's subscription")

	remote.SetFaults(p.driving, func(*hremote.Envelope) bool { return true })
	silent := time.Now()
	require.Eventually(t, func() bool { return p.liveCommands(t) == 0 }, 2*lease, 10*time.Millisecond,
		"the serving node detached the silent owner's subscription")
	assert.LessOrEqual(t, time.Since(silent), lease, "detached within the lease")
	again, err := p.rt.Adapter(sh.Provider).Attach(ctx, sh, sessions[0].ID, paddock.AttachOpts{})
	require.NoError(t, err, "still attachable")
	f := <-again.(*actors.FrameStream).C()
	require.IsType(t, &messages.Stdout{}, f)
	assert.Equal(t, "hello", string(f.(*messages.Stdout).GetData()))
	require.NoError(t, again.Close())
	remote.SetFaults(p.driving, nil)
}

// A spawn whose reply the link lost is sent again after a quarter of a
// lease, and the serving runtime answers the repeat with the first reply
// instead of starting the command again: the stream opens, every byte
// arrives once with one terminal frame, and the command ran once. Without
// a session to re-attach to, the frames that came before the reply are
// kept, not lost.
func TestALostSpawnReplyIsAskedAgain(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		args     []string
		sessions bool // the serving adapter's spawns follow a session
		stdin    string
		stdout   string
		code     int32
	}{
		{"a session", []string{"out:hello ", "out:world", "exit:3"}, true, "", "hello world", 3},
		{"no session, output after the reply", []string{"stay"}, false, "ping", "echo:ping", 0},
		{"no session, output before the reply", []string{"out:early ", "out:bird", "exit:4"}, false, "", "early bird", 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPair(t, 2*time.Second, func(c *actors.Config) {
				if !tc.sessions {
					c.Adapters[paddock.ProviderFake] = sessionless{c.Adapters[paddock.ProviderFake]}
				}
			})
			rt := p.driveRuntime(t)
			h, err := rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
			require.NoError(t, err)
			// The first batch that holds a spawn reply and nothing else is
			// lost. A reply that shares its batch with frames passes: losing
			// those frames too would be a loss no session can replay, so
			// such a spawn is let through and the next one tried.
			var replies, dropped atomic.Int64
			remote.SetFaults(p.serving, func(env *hremote.Envelope) bool {
				held, only := 0, true
				for _, m := range env.GetMessages() {
					if strings.HasSuffix(env.GetTypeNames()[m.GetTypeNameIndex()], "SpawnReply") {
						held++
					} else {
						only = false
					}
				}
				replies.Add(int64(held))
				return held > 0 && only && dropped.CompareAndSwap(0, 1)
			})
			spawns := 0
			for dropped.Load() == 0 {
				require.Less(t, spawns, 50, "no spawn reply ever crossed alone")
				spawns++
				s, err := rt.Adapter(h.Provider).Spawn(ctx, h, paddock.NewCmd("emit", tc.args...),
					paddock.SpawnOpts{Detachable: tc.sessions, Stdin: tc.stdin != ""})
				require.NoError(t, err)
				if tc.stdin != "" {
					require.NoError(t, s.WriteStdin(ctx, []byte(tc.stdin)))
					require.NoError(t, s.CloseStdin(ctx))
				}
				stdout, _, terminals := collect(t, s, 2*time.Minute)
				require.Len(t, terminals, 1, "one terminal frame")
				exit, ok := terminals[0].(*messages.Exit)
				require.True(t, ok, "the exit, not %v", terminals[0])
				assert.Equal(t, tc.code, exit.GetCode())
				assert.Equal(t, tc.stdout, string(stdout), "every byte once")
			}
			assert.Equal(t, int64(spawns+1), replies.Load(), "the lost reply was sent once more")
			sh := paddock.Handle{Provider: paddock.ProviderFake, Name: "box"}
			sessions, err := p.fake.ListSessions(ctx, sh)
			require.NoError(t, err)
			assert.Len(t, sessions, spawns, "each command ran once")
		})
	}
}

// sessionless is an adapter whose spawns follow no session, as spawns
// that are not detachable are on most providers.
type sessionless struct{ paddock.Adapter }

func (a sessionless) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts) (paddock.Stream, error) {
	st, err := a.Adapter.Spawn(ctx, h, cmd, opts)
	if err != nil {
		return nil, err
	}
	return noSession{st}, nil
}

type noSession struct{ paddock.Stream }

func (noSession) SessionID() string { return "" }

// A request that serving twice does no harm (a destroy, a read) is sent
// again, same id, when its reply is lost: the caller gets the answer,
// not unavailable.
func TestALostReplyToARepeatableRequestIsAskedAgain(t *testing.T) {
	t.Parallel()
	p := newPair(t, 2*time.Second)
	rt := p.driveRuntime(t)
	h, err := rt.Adapter(paddock.ProviderFake).Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	lost := map[string]*atomic.Int64{"GetReply": {}, "DestroyReply": {}}
	remote.SetFaults(p.serving, func(env *hremote.Envelope) bool {
		for _, m := range env.GetMessages() {
			name := env.GetTypeNames()[m.GetTypeNameIndex()]
			for suffix, n := range lost {
				if strings.HasSuffix(name, suffix) && len(env.GetMessages()) == 1 && n.CompareAndSwap(0, 1) {
					return true
				}
			}
		}
		return false
	})
	a := rt.Adapter(h.Provider)
	got, err := a.Get(ctx, h)
	require.NoError(t, err, "a lost get reply is asked again")
	assert.Equal(t, h.Name, got.Name)
	require.NoError(t, a.Destroy(ctx, h), "a lost destroy reply is asked again")
	_, err = a.Get(ctx, h)
	require.ErrorIs(t, err, paddock.ErrNotFound, "destroyed")
	for name, n := range lost {
		assert.Equal(t, int64(1), n.Load(), "one %s was lost", name)
	}
}
