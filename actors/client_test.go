package actors_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnknownProviderFailsLoudlyEverywhere(t *testing.T) {
	t.Parallel()
	rt, _ := startFake(t)
	h := paddock.Handle{Provider: "nope", Name: "box"}
	c := paddock.Subscription{Provider: "nope", Ref: "r"}
	calls := map[string]func() error{
		"Create":      func() error { _, err := rt.Adapter("nope").Create(ctx, "box", paddock.CreateOpts{}); return err },
		"CreateNew":   func() error { _, err := rt.Adapter("nope").CreateNew(ctx, "box", paddock.CreateNewOpts{}); return err },
		"Get":         func() error { _, err := rt.Adapter(h.Provider).Get(ctx, h); return err },
		"Destroy":     func() error { return rt.Adapter(h.Provider).Destroy(ctx, h) },
		"DestroyOnce": func() error { return rt.Adapter(h.Provider).DestroyOnce(ctx, h, paddock.DestroyOnceOpts{}) },
		"List":        func() error { _, err := rt.Adapter("nope").ListAllNames(ctx); return err },
		"Suspend":     func() error { return rt.Adapter(h.Provider).Suspend(ctx, h) },
		"Resume":      func() error { _, err := rt.Adapter(h.Provider).Resume(ctx, h); return err },
		"Exec": func() error {
			_, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("x"), paddock.ExecOpts{})
			return err
		},
		"Spawn":        func() error { _, err := spawn(rt, ctx, h, paddock.NewCmd("x"), paddock.SpawnOpts{}); return err },
		"Attach":       func() error { _, err := attach(rt, ctx, h, "s", paddock.AttachOpts{}); return err },
		"WriteStdin":   func() error { return rt.Controls(c).WriteStdin(ctx, []byte("x")) },
		"CloseStdin":   func() error { return rt.Controls(c).CloseStdin(ctx) },
		"StopCommand":  func() error { return rt.Controls(c).Stop(ctx) },
		"ListSessions": func() error { _, err := rt.Adapter(h.Provider).ListSessions(ctx, h); return err },
		"TerminateSession": func() error {
			return rt.Adapter(h.Provider).TerminateSession(ctx, h, "s", paddock.TerminateOpts{})
		},
		"ApplyNetworkPolicy": func() error { return rt.Adapter(h.Provider).ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{}) },
		"PublicURL":          func() error { _, err := rt.Adapter(h.Provider).PublicURL(ctx, h); return err },
		"CreateCheckpoint": func() error {
			_, err := rt.Adapter(h.Provider).CreateCheckpoint(ctx, h, paddock.CheckpointOpts{})
			return err
		},
		"RestoreCheckpoint": func() error { return rt.Adapter(h.Provider).RestoreCheckpoint(ctx, h, "cp") },
		"ListCheckpoints":   func() error { _, err := rt.Adapter(h.Provider).ListCheckpoints(ctx, h); return err },
		"CreateCheckpointOnce": func() error {
			_, err := rt.Adapter(h.Provider).CreateCheckpointOnce(ctx, h, paddock.CheckpointOnceOpts{OperationID: "op"})
			return err
		},
		"WriteFile": func() error { return rt.Adapter(h.Provider).WriteFile(ctx, h, "/f", 0o644, strings.NewReader("x")) },
		"ReadFile":  func() error { _, err := rt.Adapter(h.Provider).ReadFile(ctx, h, "/f"); return err },
		"Expose":    func() error { _, err := rt.Adapter(h.Provider).Expose(ctx, h, 80, paddock.ExposeOpts{}); return err },
		"Revoke":    func() error { return rt.Adapter(h.Provider).Revoke(ctx, h, paddock.Preview{}) },
	}
	a := rt.Adapter("nope")
	assert.Zero(t, a.Capabilities().Len(), "an unknown provider advertises nothing")
	assert.Equal(t, h, a.BuildHandle("box"), "a handle is built with no I/O, and every call with it fails")
	assert.Equal(t, "/x", paddock.HostPath(a, h, "/x"))
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			var unknown *paddock.UnknownProviderError
			require.ErrorAs(t, err, &unknown)
			assert.Equal(t, paddock.Provider("nope"), unknown.Provider)
			assert.Equal(t, []paddock.Provider{"fake"}, unknown.Configured)
		})
	}
}

func TestOptionalOperationsNeverFallBack(t *testing.T) {
	t.Parallel()
	// A fake with no optional capability, and an adapter lacking the
	// optional methods altogether.
	f := fake.New(fake.WithCapabilities(paddock.NewCapabilitySet(paddock.CapAttach)))
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": f, "bare": bare{f}}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)); f.Reset() })
	for _, p := range []paddock.Provider{"fake", "bare"} {
		h, err := rt.Adapter(p).Create(ctx, "box", paddock.CreateOpts{})
		require.NoError(t, err)
		h.Provider = p
		_, err = rt.Adapter(p).CreateNew(ctx, "fresh", paddock.CreateNewOpts{})
		require.ErrorIs(t, err, paddock.ErrNotSupported, "%s CreateNew", p)
		require.ErrorIs(t, rt.Adapter(h.Provider).DestroyOnce(ctx, h, paddock.DestroyOnceOpts{}), paddock.ErrNotSupported, "%s DestroyOnce", p)
		_, err = rt.Adapter(h.Provider).CreateCheckpointOnce(ctx, h, paddock.CheckpointOnceOpts{OperationID: "op"})
		require.ErrorIs(t, err, paddock.ErrNotSupported)
		require.ErrorIs(t, rt.Adapter(h.Provider).TerminateSession(ctx, h, "s", paddock.TerminateOpts{}), paddock.ErrNotSupported)
		_, err = rt.Adapter(h.Provider).Expose(ctx, h, 80, paddock.ExposeOpts{})
		require.ErrorIs(t, err, paddock.ErrNotSupported)
		_, err = rt.Adapter(h.Provider).CreateCheckpoint(ctx, h, paddock.CheckpointOpts{})
		require.ErrorIs(t, err, paddock.ErrNotSupported)
		require.ErrorIs(t, rt.Adapter(h.Provider).ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{}), paddock.ErrNotSupported)
		_, err = spawn(rt, ctx, h, paddock.NewCmd("emit"), paddock.SpawnOpts{TTY: true})
		require.ErrorIs(t, err, paddock.ErrNotSupported, "tty without the capability")
		_, err = spawn(rt, ctx, h, paddock.NewCmd("emit"), paddock.SpawnOpts{Name: "dev"})
		require.ErrorIs(t, err, paddock.ErrNotSupported, "a name without named_spawn")
		_, err = rt.Adapter(h.Provider).Get(ctx, h)
		require.NoError(t, err, "CreateNew did not fall back to Create: the fresh name does not exist")
		_, err = rt.Adapter(p).Get(ctx, paddock.Handle{Provider: p, Name: "fresh"})
		require.ErrorIs(t, err, paddock.ErrNotFound)
	}
	require.ErrorIs(t, rt.Adapter("fake").TerminateSession(ctx, paddock.Handle{Provider: "fake", Name: "box"}, "../x", paddock.TerminateOpts{}),
		paddock.ErrTerminationRequest, "validation comes before the capability check")
}

// bare exposes only the required operations of a fake.
type bare struct{ f *fake.Adapter }

func (b bare) Provider() paddock.Provider          { return "bare" }
func (b bare) Capabilities() paddock.CapabilitySet { return b.f.Capabilities() }
func (b bare) BuildHandle(name string) paddock.Handle {
	return paddock.Handle{Provider: "bare", Name: name}
}
func (b bare) Create(ctx context.Context, n string, o paddock.CreateOpts) (paddock.Handle, error) {
	_, err := b.f.Create(ctx, "bare-"+n, o)
	return b.BuildHandle(n), err
}
func (b bare) Get(ctx context.Context, h paddock.Handle) (paddock.Info, error) {
	return b.f.Get(ctx, b.h(h))
}
func (b bare) Destroy(ctx context.Context, h paddock.Handle) error { return b.f.Destroy(ctx, b.h(h)) }
func (b bare) ListAllNames(ctx context.Context) ([]string, error)  { return b.f.ListAllNames(ctx) }
func (b bare) Suspend(ctx context.Context, h paddock.Handle) error { return b.f.Suspend(ctx, b.h(h)) }
func (b bare) Resume(ctx context.Context, h paddock.Handle) (paddock.Handle, error) {
	return b.f.Resume(ctx, b.h(h))
}
func (b bare) WriteFile(ctx context.Context, h paddock.Handle, p string, m fs.FileMode, r io.Reader) error {
	return b.f.WriteFile(ctx, b.h(h), p, m, r)
}
func (b bare) ReadFile(ctx context.Context, h paddock.Handle, p string) (io.ReadCloser, error) {
	return b.f.ReadFile(ctx, b.h(h), p)
}
func (b bare) Exec(ctx context.Context, h paddock.Handle, c paddock.Cmd, o paddock.ExecOpts) (paddock.ExecResult, error) {
	return b.f.Exec(ctx, b.h(h), c, o)
}
func (b bare) Spawn(ctx context.Context, h paddock.Handle, c paddock.Cmd, o paddock.SpawnOpts) (paddock.Stream, error) {
	return b.f.Spawn(ctx, b.h(h), c, o)
}
func (b bare) ListSessions(ctx context.Context, h paddock.Handle) ([]paddock.Session, error) {
	return b.f.ListSessions(ctx, b.h(h))
}
func (b bare) Attach(ctx context.Context, h paddock.Handle, id string, o paddock.AttachOpts) (paddock.Stream, error) {
	return b.f.Attach(ctx, b.h(h), id, o)
}
func (b bare) ApplyNetworkPolicy(ctx context.Context, h paddock.Handle, p paddock.NetworkPolicy) error {
	return b.f.ApplyNetworkPolicy(ctx, b.h(h), p)
}
func (b bare) PublicURL(ctx context.Context, h paddock.Handle) (string, error) {
	return b.f.PublicURL(ctx, b.h(h))
}
func (b bare) h(h paddock.Handle) paddock.Handle { h.Name = "bare-" + h.Name; return h }

func TestStdinAndStopSemantics(t *testing.T) {
	t.Parallel()
	rt, f := startFake(t)
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)

	done, err := spawn(rt, ctx, h, paddock.NewCmd("emit", "out:x"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	all(t, done)
	require.ErrorIs(t, done.WriteStdin(ctx, []byte("late")), paddock.ErrCommandExited, "a write after the exit")
	require.NoError(t, done.CloseStdin(ctx), "closing stdin of an exited command is ok")
	require.NoError(t, done.Stop(ctx))
	require.NoError(t, done.Stop(ctx), "stop is repeatable")
	require.ErrorIs(t, done.CloseStdin(ctx), paddock.ErrCommandExited, "after StopCommand")

	live, err := spawn(rt, ctx, h, paddock.NewCmd("emit", "out:ready", "stay"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	frame(t, live)
	require.NoError(t, live.Close())
	require.NoError(t, live.Close(), "Close is idempotent")
	assert.Empty(t, all(t, live), "after a detach the channel closes with no terminal frame")
	assert.True(t, f.SessionLive("box", live.SessionID()), "the command keeps running")
	require.ErrorIs(t, live.WriteStdin(ctx, []byte("x")), paddock.ErrCommandExited, "a detached command takes no stdin")
	require.NoError(t, rt.Controls(paddock.Subscription{Provider: "fake", Ref: "never-existed"}).Stop(ctx), "stop of an unknown ref is ok")
	require.ErrorIs(t, rt.Controls(paddock.Subscription{Provider: "fake", Ref: "never-existed"}).WriteStdin(ctx, []byte("x")), paddock.ErrCommandExited)

	att, err := attach(rt, ctx, h, live.SessionID(), paddock.AttachOpts{Stdin: true})
	require.NoError(t, err)
	assert.Equal(t, "ready", string(frame(t, att).(*messages.Stdout).GetData()), "a new attacher replays")
	assert.NotEqual(t, live.Subscription().Ref, att.Subscription().Ref, "an attach gets a fresh ref")
	require.NoError(t, att.WriteStdin(ctx, []byte("via-attach")))
	assert.Equal(t, "echo:via-attach", string(frame(t, att).(*messages.Stdout).GetData()))
	require.NoError(t, rt.Adapter(h.Provider).TerminateSession(ctx, h, live.SessionID(), paddock.TerminateOpts{}))
	rest := all(t, att)
	require.Len(t, rest, 1)
	assert.Equal(t, "exit:137", terminalText(rest[0]))
}

func TestWritesArriveInOrder(t *testing.T) {
	t.Parallel()
	rt, _ := startFake(t)
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	s, err := spawn(rt, ctx, h, paddock.NewCmd("emit", "stay"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	const n = 200
	for i := range n {
		require.NoError(t, s.WriteStdin(ctx, []byte(itoa(i))))
	}
	for i := range n {
		assert.Equal(t, "echo:"+itoa(i), string(frame(t, s).(*messages.Stdout).GetData()))
	}
	require.NoError(t, s.CloseStdin(ctx))
	assert.Len(t, all(t, s), 1)
}

func TestCallsHonourTheContext(t *testing.T) {
	t.Parallel()
	rt, _ := startFake(t)
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = rt.Adapter(h.Provider).Exec(cctx, h, paddock.NewCmd("emit", "stay"), paddock.ExecOpts{})
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, paddock.ErrUnavailable)
	assert.True(t, paddock.IsTransient(err))
}

func TestConfigAndLifecycle(t *testing.T) {
	t.Parallel()
	_, err := actors.Start(actors.Config{})
	require.ErrorIs(t, err, paddock.ErrInvalid, "no adapters")
	_, err = actors.Start(actors.Config{Adapters: paddock.Registry{"fake": fake.New()}, Window: -1})
	require.ErrorIs(t, err, paddock.ErrInvalid)
	_, err = actors.Start(actors.Config{Adapters: paddock.Registry{"fake": fake.New()}, CloseTimeout: -time.Second})
	require.ErrorIs(t, err, paddock.ErrInvalid)
	_, err = actors.Start(actors.Config{Adapters: paddock.Registry{"fake": fake.New()}, WriteSettle: -time.Second})
	require.ErrorIs(t, err, paddock.ErrInvalid)

	e, err := actor.NewEngine(actor.NewEngineConfig())
	require.NoError(t, err)
	f := fake.New()
	one, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": f}, Engine: e})
	require.NoError(t, err)
	_, err = actors.Start(actors.Config{Adapters: paddock.Registry{"fake": f}, Engine: e})
	require.ErrorIs(t, err, paddock.ErrInvalid, "two runtimes of one name on one engine")
	two, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": f}, Engine: e, Name: "second"})
	require.NoError(t, err)
	assert.Same(t, e, two.Engine(), "embedded in the caller's engine")
	require.NoError(t, one.Close())
	require.NoError(t, one.Shutdown(ctx), "Shutdown after Close is idempotent")
	_, err = one.Adapter("fake").Get(ctx, paddock.Handle{Provider: "fake", Name: "x"})
	require.ErrorIs(t, err, paddock.ErrUnavailable, "a stopped runtime refuses calls")
	h, err := two.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err, "the other runtime on the engine is untouched")
	require.NoError(t, two.Adapter(h.Provider).Destroy(ctx, h))
	require.NoError(t, two.Shutdown(ctx))
}

func TestFiles(t *testing.T) {
	t.Parallel()
	rt, f := startFake(t)
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	big := bytes.Repeat([]byte("x"), 5<<20)
	require.NoError(t, rt.Adapter(h.Provider).WriteFile(ctx, h, "/a/b/big", 0o644, bytes.NewReader(big)))
	rc, err := rt.Adapter(h.Provider).ReadFile(ctx, h, "/a/b/big")
	require.NoError(t, err)
	got, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	assert.Equal(t, big, got)
	_, err = rt.Adapter(h.Provider).ReadFile(ctx, h, "relative")
	require.ErrorIs(t, err, paddock.ErrInvalid)
	stored, ok := f.File("box", "/a/b/big")
	require.True(t, ok)
	assert.Len(t, stored, len(big))
}

func TestNothingIsLoggedByDefault(t *testing.T) {
	t.Parallel()
	// The zero Logger is silent; an injected one receives the runtime's
	// lines, and a violation is one of them.
	var logs bytes.Buffer
	a := &scripted{Adapter: fake.New()}
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{"fake": a}, Logger: zerolog.New(&logs)})
	require.NoError(t, err)
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	s, err := spawn(rt, ctx, h, paddock.NewCmd("two-exits"), paddock.SpawnOpts{})
	require.NoError(t, err)
	all(t, s)
	require.NoError(t, rt.Shutdown(ctx))
	assert.Contains(t, logs.String(), "adapter broke the frame contract")
	assert.Contains(t, logs.String(), `"violation":"duplicate_terminal"`)
}

// TestActorsUseTheMessages drives the runtime purely with messages from an
// actor: requests to the root, replies to the sender, frames to the owner.
func TestActorsUseTheMessages(t *testing.T) {
	t.Parallel()
	rt, _ := startFake(t)
	got := make(chan any, 64)
	credits := actors.NewCredits(0)
	client := rt.Engine().SpawnFunc(func(c *actor.Context) {
		switch m := c.Message().(type) {
		case messages.Frame:
			credits.Consumed(c, m)
			got <- m
		case interface{ GetId() string }:
			got <- m
		case start:
			c.Send(rt.PID(), &messages.CreateRequest{Id: "1", Provider: "fake", Name: "box"})
		case spawnIt:
			c.Send(rt.PID(), &messages.SpawnRequest{Id: "2", Handle: &messages.Handle{Provider: "fake", Name: "box"},
				Cmd: wire.CmdMessage(paddock.NewCmd("emit", "out:a", "exit:5"))})
		case unknownIt:
			c.Send(rt.PID(), &messages.GetRequest{Id: "3", Handle: &messages.Handle{Provider: "nope", Name: "box"}})
		}
	}, "client")
	defer rt.Engine().Poison(client)

	next := func() any {
		select {
		case m := <-got:
			return m
		case <-time.After(time.Minute):
			t.Fatal("nothing arrived")
		}
		return nil
	}
	rt.Engine().Send(client, start{})
	created := next().(*messages.CreateReply)
	assert.Equal(t, "1", created.GetId())
	assert.Nil(t, created.GetFailure())
	assert.Equal(t, "box", created.GetHandle().GetName())

	rt.Engine().Send(client, spawnIt{})
	var seen []string
	for len(seen) < 3 {
		switch m := next().(type) {
		case *messages.SpawnReply:
			assert.Equal(t, "2", m.GetId())
			seen = append(seen, "reply")
		case *messages.Stdout:
			seen = append(seen, "stdout:"+string(m.GetData()))
		case *messages.Exit:
			seen = append(seen, "exit")
			assert.Equal(t, int32(5), m.GetCode())
		}
	}
	assert.Equal(t, []string{"stdout:a", "exit"}, without(seen, "reply"), "frames reach the sender as owner, in order")

	rt.Engine().Send(client, unknownIt{})
	failed := next().(*messages.GetReply)
	err := wire.ErrorOf(failed.GetFailure())
	var unknown *paddock.UnknownProviderError
	require.True(t, errors.As(err, &unknown), "the failure crosses as a taxonomy kind: %v", err)
}

type (
	start     struct{}
	spawnIt   struct{}
	unknownIt struct{}
)

func without(xs []string, drop string) []string {
	var out []string
	for _, x := range xs {
		if x != drop {
			out = append(out, x)
		}
	}
	return out
}

func TestSmoke(t *testing.T) {
	t.Parallel()
	rt, _ := startFake(t)
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	res, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("emit", "out:hi", "err:x", "exit:3"), paddock.ExecOpts{})
	require.NoError(t, err)
	assert.Equal(t, "hi", string(res.Stdout))
	assert.Equal(t, 3, res.ExitCode)

	s, err := spawn(rt, ctx, h, paddock.NewCmd("emit", "out:ready", "stay"), paddock.SpawnOpts{Stdin: true})
	require.NoError(t, err)
	f := frame(t, s)
	require.IsType(t, &messages.Stdout{}, f)
	require.NoError(t, s.WriteStdin(ctx, []byte("ping")))
	assert.Equal(t, "echo:ping", string(frame(t, s).(*messages.Stdout).Data))
	require.NoError(t, s.CloseStdin(ctx))
	fs := all(t, s)
	require.Len(t, fs, 1)
	assert.Equal(t, int32(0), fs[0].(*messages.Exit).Code)
	assert.Equal(t, uint64(3), fs[0].GetSeq())
}

// The facade tests of the reference fake (docs/contract.md#fake): the fake registered under each hosted
// provider's slot, every call dispatched on the tag the caller passes.
func TestFacadeDispatchesOnTheTag(t *testing.T) {
	t.Parallel()
	for _, p := range []paddock.Provider{paddock.ProviderSprites, paddock.ProviderE2B, paddock.ProviderDaytona} {
		t.Run(string(p), func(t *testing.T) {
			f := fake.New()
			rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{p: f}})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)); f.Reset() })

			h, err := rt.Adapter(p).Create(ctx, "box", paddock.CreateOpts{})
			require.NoError(t, err)
			assert.Equal(t, paddock.ProviderFake, h.Provider, "the fake tags its own handles")
			_, err = rt.Adapter(h.Provider).Get(ctx, h)
			var unknown *paddock.UnknownProviderError
			require.ErrorAs(t, err, &unknown, "the fake tag is not registered here")
			h.Provider = p

			res, err := rt.Adapter(h.Provider).Exec(ctx, h, paddock.NewCmd("emit", "out:out", "err:err", "exit:4"), paddock.ExecOpts{StderrToStdout: true})
			require.NoError(t, err)
			assert.Equal(t, "outerr", string(res.Stdout))
			assert.Equal(t, 4, res.ExitCode)

			s, err := spawn(rt, ctx, h, paddock.NewCmd("emit", "stay"), paddock.SpawnOpts{Stdin: true})
			require.NoError(t, err)
			assert.Equal(t, p, s.Subscription().Provider, "commands carry the caller's tag")
			require.NoError(t, s.WriteStdin(ctx, []byte("in"+"put")))
			assert.Equal(t, "echo:input", string(frame(t, s).(*messages.Stdout).GetData()))
			require.NoError(t, s.CloseStdin(ctx))
			assert.Equal(t, []string{"exit:0"}, terminals(all(t, s)))

			runner, err := spawn(rt, ctx, h, paddock.NewCmd("runner", "stay"), paddock.SpawnOpts{Stdin: true})
			require.NoError(t, err)
			sessions, err := rt.Adapter(h.Provider).ListSessions(ctx, h)
			require.NoError(t, err)
			var id string
			for _, sess := range sessions {
				if sess.Command == "runner stay" {
					id = sess.ID
				}
			}
			require.NotEmpty(t, id, "found by its command line")
			att, err := attach(rt, ctx, h, id, paddock.AttachOpts{Stdin: true})
			require.NoError(t, err)
			assert.NotEqual(t, runner.Subscription().Ref, att.Subscription().Ref)
			require.NoError(t, runner.CloseStdin(ctx))
			assert.Equal(t, []string{"exit:0"}, terminals(all(t, runner)))
			assert.Equal(t, []string{"exit:0"}, terminals(all(t, att)), "both refs get the exit")

			_, err = rt.Adapter(h.Provider).CreateCheckpoint(ctx, h, paddock.CheckpointOpts{})
			require.ErrorIs(t, err, paddock.ErrNotSupported)
			require.ErrorIs(t, rt.Adapter(h.Provider).RestoreCheckpoint(ctx, h, "cp"), paddock.ErrNotSupported)
			assert.Equal(t, "/w/x", paddock.HostPath(rt.Adapter(h.Provider), h, "/w/x"))

			require.NoError(t, rt.Adapter(h.Provider).Destroy(ctx, h))
			_, err = rt.Adapter(h.Provider).Get(ctx, h)
			require.ErrorIs(t, err, paddock.ErrNotFound)
		})
	}
}

func terminals(fs []messages.Frame) []string {
	var out []string
	for _, f := range fs {
		if messages.IsTerminal(f) {
			out = append(out, terminalText(f))
		}
	}
	return out
}

// A download the caller neither reads to its end nor closes belongs to its
// sandbox's actor: destroying the sandbox ends it with an error, never a
// short read that looks whole, and nothing of it is left running (goleak).
func TestADestroyEndsTheFileStreamsOfItsSandbox(t *testing.T) {
	t.Parallel()
	rt, _ := startFake(t)
	a := rt.Adapter(paddock.ProviderFake)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	big := bytes.Repeat([]byte("x"), 4<<20)
	require.NoError(t, a.WriteFile(ctx, h, "/big", 0o644, bytes.NewReader(big)))
	rc, err := a.ReadFile(ctx, h, "/big")
	require.NoError(t, err)
	defer rc.Close()
	first := make([]byte, 1)
	_, err = io.ReadFull(rc, first)
	require.NoError(t, err)

	require.NoError(t, a.Destroy(ctx, h))
	rest, err := io.ReadAll(rc)
	require.Error(t, err, "a download cut by the destroy ends with an error")
	assert.ErrorIs(t, err, paddock.ErrUnavailable)
	assert.Less(t, len(rest)+1, len(big), "the destroy cut it short")
}

// A download left unread does not hold Shutdown up: the runtime ends it.
func TestShutdownEndsAnUnreadDownload(t *testing.T) {
	t.Parallel()
	f := fake.New()
	t.Cleanup(f.Reset)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: f}})
	require.NoError(t, err)
	a := rt.Adapter(paddock.ProviderFake)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	require.NoError(t, a.WriteFile(ctx, h, "/big", 0o644, bytes.NewReader(bytes.Repeat([]byte("x"), 1<<20))))
	rc, err := a.ReadFile(ctx, h, "/big")
	require.NoError(t, err)
	defer rc.Close()
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	require.NoError(t, rt.Shutdown(sctx), "an unread download is no goroutine Shutdown waits for in vain")
	_, err = io.ReadAll(rc)
	require.ErrorIs(t, err, paddock.ErrUnavailable)
}

// stalling is a fake whose WriteFile reads one byte, says so, and reads
// the rest only once released, as a slow provider would; its ReadFile and
// WriteFile panic for the paths that ask.
type stalling struct {
	*fake.Adapter
	readOne, release chan struct{}
	after            chan error // what the read after the release answered
}

func (s *stalling) WriteFile(ctx context.Context, h paddock.Handle, path string, mode fs.FileMode, r io.Reader) error {
	switch path {
	case "/panic":
		panic("the adapter broke")
	case "/stall":
		one := make([]byte, 1)
		_, err := r.Read(one)
		s.readOne <- struct{}{}
		<-s.release
		_, err = r.Read(one)
		s.after <- err
		return err
	}
	return s.Adapter.WriteFile(ctx, h, path, mode, r)
}

func (s *stalling) ReadFile(ctx context.Context, h paddock.Handle, path string) (io.ReadCloser, error) {
	if path == "/panic" {
		return panickingReader{}, nil
	}
	return s.Adapter.ReadFile(ctx, h, path)
}

type panickingReader struct{}

func (panickingReader) Read([]byte) (int, error) { panic("the reader broke") }
func (panickingReader) Close() error             { return nil }

// countingReader counts its reads, and those after done is set.
type countingReader struct {
	done  atomic.Bool
	late  atomic.Int64
	inner io.Reader
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.done.Load() {
		c.late.Add(1)
	}
	return c.inner.Read(p)
}

// Nothing reads the caller's content once its WriteFile has returned, even
// when the caller gave up while the adapter still wanted bytes.
func TestNothingReadsTheContentOnceWriteFileReturned(t *testing.T) {
	t.Parallel()
	s := &stalling{Adapter: fake.New(), readOne: make(chan struct{}, 1), release: make(chan struct{}), after: make(chan error, 1)}
	t.Cleanup(s.Reset)
	// The adapter ignores its cancelled context: the caller waits for its
	// answer only WriteSettle long.
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: s}, WriteSettle: 50 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)) })
	a := rt.Adapter(paddock.ProviderFake)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)

	body := &countingReader{inner: strings.NewReader("content")}
	wctx, cancel := context.WithCancel(ctx)
	returned := make(chan error, 1)
	go func() { returned <- a.WriteFile(wctx, h, "/stall", 0o644, body) }()
	<-s.readOne
	cancel()
	err = <-returned
	body.done.Store(true)
	require.ErrorIs(t, err, context.Canceled, "the caller's end is its answer")
	close(s.release)
	assert.Error(t, <-s.after, "the adapter's read after the return is refused")
	assert.Zero(t, body.late.Load(), "the caller's reader was not read after WriteFile returned")
}

// An adapter's panic in a file call is an answer, never a crash: in
// WriteFile the call's error, in a download's reader the reader's error.
func TestFilePanicsAreAnswers(t *testing.T) {
	t.Parallel()
	s := &stalling{Adapter: fake.New()}
	t.Cleanup(s.Reset)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: s}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(ctx)) })
	a := rt.Adapter(paddock.ProviderFake)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)

	err = a.WriteFile(ctx, h, "/panic", 0o644, strings.NewReader("x"))
	require.ErrorIs(t, err, paddock.ErrUnavailable)
	assert.Contains(t, err.Error(), "adapter_panic")
	rc, err := a.ReadFile(ctx, h, "/panic")
	require.NoError(t, err)
	defer rc.Close()
	_, err = io.ReadAll(rc)
	require.ErrorIs(t, err, paddock.ErrUnavailable)
	assert.Contains(t, err.Error(), "adapter_panic")
}

// failingReader fails after its first bytes with an error of its own type.
type failingReader struct{ sent bool }

type readerBroke struct{}

func (readerBroke) Error() string { return "the caller's reader broke" }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.sent {
		return 0, readerBroke{}
	}
	f.sent = true
	return copy(p, "partial"), nil
}

// A write that failed because the caller's reader did answers the
// reader's error too (errors.As finds it), though it never crossed a
// message.
func TestAWriteFailedByTheCallersReaderKeepsItsError(t *testing.T) {
	t.Parallel()
	rt, _ := startFake(t)
	a := rt.Adapter(paddock.ProviderFake)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	err = a.WriteFile(ctx, h, "/f", 0o644, &failingReader{})
	require.Error(t, err)
	var broke readerBroke
	assert.True(t, errors.As(err, &broke), "errors.As finds the reader's error: %v", err)
	var op *paddock.OpError
	require.ErrorAs(t, err, &op)
	assert.Equal(t, "write_file", op.Op)
}

// Many downloads and uploads at once each get their own bytes.
func TestFileStreamsAtOnce(t *testing.T) {
	t.Parallel()
	rt, _ := startFake(t)
	a := rt.Adapter(paddock.ProviderFake)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			want := bytes.Repeat([]byte{byte(i)}, 64<<10+i)
			path := "/f" + itoa(i)
			if !assert.NoError(t, a.WriteFile(ctx, h, path, 0o644, bytes.NewReader(want))) {
				return
			}
			rc, err := a.ReadFile(ctx, h, path)
			if !assert.NoError(t, err) {
				return
			}
			defer rc.Close()
			got, err := io.ReadAll(rc)
			assert.NoError(t, err)
			assert.Equal(t, want, got, path)
		})
	}
	wg.Wait()
}
