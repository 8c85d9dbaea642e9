package fake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/fake"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

func TestCreateNewOnAnAdoptedName(t *testing.T) {
	t.Parallel()
	a := world(t)
	h := box(t, a, "box")
	require.NoError(t, a.WriteFile(ctx, h, "/a.txt", 0o644, bytes.NewReader([]byte("kept"))))
	_, err := a.CreateNew(ctx, "box", paddock.CreateNewOpts{})
	require.ErrorIs(t, err, paddock.ErrAlreadyExists)
	assert.False(t, paddock.IsTransient(err))
	got, ok := a.File("box", "/a.txt")
	require.True(t, ok)
	assert.Equal(t, []byte("kept"), got, "the existing sandbox is untouched")
}

func TestConcurrentCreateNew(t *testing.T) {
	t.Parallel()
	a := world(t)
	const n = 16
	var wg sync.WaitGroup
	handles := make([]paddock.Handle, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			handles[i], errs[i] = a.CreateNew(ctx, "race", paddock.CreateNewOpts{})
		}()
	}
	wg.Wait()
	var winner paddock.Handle
	wins := 0
	for i, err := range errs {
		if err == nil {
			wins++
			winner = handles[i]
			continue
		}
		require.ErrorIs(t, err, paddock.ErrAlreadyExists)
	}
	require.Equal(t, 1, wins, "exactly one CreateNew succeeds")
	info, err := a.Get(ctx, winner)
	require.NoError(t, err)
	var raw struct{ Name, ID string }
	require.NoError(t, json.Unmarshal(info.Raw, &raw))
	assert.Equal(t, "race", raw.Name)
	assert.Equal(t, winner.InstanceID, raw.ID)
	assert.Regexp(t, `^fake-[1-9][0-9]*$`, winner.InstanceID)
	assert.Equal(t, "race", info.Name)
	assert.Equal(t, winner.InstanceID, info.ID)
	assert.WithinDuration(t, time.Now(), info.CreatedAt, time.Minute)
}

func TestCreateRefusesUnknownParameters(t *testing.T) {
	t.Parallel()
	a := world(t)
	_, err := a.Create(ctx, "box", paddock.CreateOpts{Params: map[string]string{"image": "x"}})
	require.ErrorIs(t, err, paddock.ErrInvalid)
	require.Contains(t, err.Error(), paddock.DetailCreateOptions)
	_, err = a.Get(ctx, a.BuildHandle("box"))
	require.ErrorIs(t, err, paddock.ErrNotFound, "nothing was created")
	_, err = a.Create(ctx, "box", paddock.CreateOpts{Params: map[string]string{}})
	require.NoError(t, err, "an empty map is the defaults")
}

func TestCreateAdoptsAndReturnsAPlainHandle(t *testing.T) {
	t.Parallel()
	a := world(t)
	first, err := a.CreateNew(ctx, "box", paddock.CreateNewOpts{})
	require.NoError(t, err)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	assert.Equal(t, a.BuildHandle("box"), h, "Create returns a plain built handle")
	info, err := a.Get(ctx, h)
	require.NoError(t, err)
	assert.Contains(t, string(info.Raw), first.InstanceID, "adoption keeps the instance id")

	plain := box(t, a, "plain")
	info, err = a.Get(ctx, plain)
	require.NoError(t, err)
	assert.JSONEq(t, `{}`, string(info.Raw))
	assert.Equal(t, paddock.StatusRunning, info.Status)
}

func TestInstanceIDsAreNeverReused(t *testing.T) {
	t.Parallel()
	a := world(t)
	seen := map[string]bool{}
	for range 5 {
		h, err := a.CreateNew(ctx, "box", paddock.CreateNewOpts{})
		require.NoError(t, err)
		assert.False(t, seen[h.InstanceID])
		seen[h.InstanceID] = true
		require.NoError(t, a.Destroy(ctx, h))
		a.Reset()
	}
}

func TestPolicyIsRecordedVerbatim(t *testing.T) {
	t.Parallel()
	a := world(t)
	h := box(t, a, "box")
	assert.Nil(t, a.Policy("box"), "no policy yet")
	require.NoError(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{}}))
	p := a.Policy("box")
	require.NotNil(t, p)
	assert.NotNil(t, p.Allow, "an empty allow list stays an empty list, not nil")
	assert.Empty(t, p.Allow)
	require.NoError(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{"*.github.com", "api.example.com"}}))
	assert.Equal(t, []string{"*.github.com", "api.example.com"}, a.Policy("box").Allow)
	require.ErrorIs(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{"http://x"}}), paddock.ErrInvalid)
	require.ErrorIs(t, a.ApplyNetworkPolicy(ctx, a.BuildHandle("nope"), paddock.NetworkPolicy{}), paddock.ErrNotFound)
}

func TestExec(t *testing.T) {
	t.Parallel()
	a := world(t)
	h := box(t, a, "box")
	tests := map[string]struct {
		instrs []string
		merge  bool
		want   string
		code   int
		err    error
	}{
		"stdout only":                   {[]string{"out:hello"}, false, "hello", 0, nil},
		"stderr dropped unless merged":  {[]string{"out:out", "err:err", "exit:4"}, false, "out", 4, nil},
		"stderr merged in order":        {[]string{"out:out", "err:err", "exit:4"}, true, "outerr", 4, nil},
		"nothing after exit (fixed)":    {[]string{"out:a", "exit:2", "out:b"}, false, "a", 2, nil},
		"first exit wins":               {[]string{"exit:5", "exit:6"}, false, "", 5, nil},
		"stay is ignored":               {[]string{"out:ready", "stay", "out:more"}, false, "readymore", 0, nil},
		"drop is closed_before_exit":    {[]string{"out:partial", "drop"}, false, "", 0, paddock.ErrClosedBeforeExit},
		"unknown instruction":           {[]string{"out:x", "jump"}, false, "", 0, paddock.ErrInvalid},
		"exit code not a number":        {[]string{"exit:three"}, false, "", 0, paddock.ErrInvalid},
		"empty script exits 0":          {nil, false, "", 0, nil},
		"negative exit code is decimal": {[]string{"exit:-1"}, false, "", -1, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res, err := a.Exec(ctx, h, paddock.NewCmd("emit", tc.instrs...), paddock.ExecOpts{StderrToStdout: tc.merge})
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				assert.Empty(t, res.Stdout, "partial output is discarded")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(res.Stdout))
			assert.Equal(t, tc.code, res.ExitCode)
		})
	}
	_, err := a.Exec(ctx, a.BuildHandle("nope"), paddock.NewCmd("emit", "out:x"), paddock.ExecOpts{})
	require.ErrorIs(t, err, paddock.ErrNotFound)
	_, err = a.Exec(ctx, h, paddock.NewCmd("emit", "out:x"), paddock.ExecOpts{Timeout: paddock.Duration(0)})
	require.ErrorIs(t, err, paddock.ErrExecTimeout, "a zero timeout answers before anything runs")
}

func TestSpawnScripts(t *testing.T) {
	t.Parallel()
	a := world(t)
	h := box(t, a, "box")
	tests := map[string]struct {
		instrs []string
		want   []string
	}{
		"output then exit":      {[]string{"out:a", "err:b", "exit:3"}, []string{"stdout:a", "stderr:b", "exit:3"}},
		"no exit means exit 0":  {[]string{"out:a"}, []string{"stdout:a", "exit:0"}},
		"nothing after exit":    {[]string{"out:a", "exit:1", "out:never"}, []string{"stdout:a", "exit:1"}},
		"drop is an error":      {[]string{"out:partial", "drop"}, []string{"stdout:partial", "error:unavailable: closed_before_exit"}},
		"nothing after drop":    {[]string{"drop", "exit:0"}, []string{"error:unavailable: closed_before_exit"}},
		"stderr warning exit 0": {[]string{"err:warning"}, []string{"stderr:warning", "exit:0"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			st := script(t, a, h, tc.instrs...)
			assert.Equal(t, tc.want, text(drain(t, st)))
			// A later attach replays the same, then the recorded terminal event.
			att, err := a.Attach(ctx, h, st.SessionID(), paddock.AttachOpts{})
			require.NoError(t, err)
			assert.Equal(t, tc.want, text(drain(t, att)))
		})
	}
	_, err := a.Spawn(ctx, h, paddock.NewCmd("emit", "teleport"), paddock.SpawnOpts{})
	require.ErrorIs(t, err, paddock.ErrInvalid, "an unknown instruction is refused at spawn time")
	_, err = a.Spawn(ctx, a.BuildHandle("nope"), paddock.NewCmd("emit"), paddock.SpawnOpts{})
	require.ErrorIs(t, err, paddock.ErrNotFound)
}

func TestStdin(t *testing.T) {
	t.Parallel()
	a := world(t)
	h := box(t, a, "box")
	st := script(t, a, h, "out:ready", "stay")
	assert.Equal(t, "stdout:ready", text([]paddock.Event{next(t, st)})[0])
	require.NoError(t, st.WriteStdin(ctx, []byte("in")))
	require.NoError(t, st.WriteStdin(ctx, []byte("put")))
	assert.Equal(t, []string{"stdout:echo:in"}, text([]paddock.Event{next(t, st)}))
	assert.Equal(t, []string{"stdout:echo:put"}, text([]paddock.Event{next(t, st)}))
	require.NoError(t, st.CloseStdin(ctx))
	assert.Equal(t, []string{"exit:0"}, text(drain(t, st)))
	require.ErrorIs(t, st.WriteStdin(ctx, []byte("late")), paddock.ErrCommandExited)
	require.NoError(t, st.CloseStdin(ctx), "closing stdin of an exited, still-subscribed command is ok")
	require.NoError(t, st.Close())
	require.ErrorIs(t, st.CloseStdin(ctx), paddock.ErrCommandExited, "after detach")
}

func TestFiles(t *testing.T) {
	t.Parallel()
	a := world(t)
	h := box(t, a, "box")
	require.NoError(t, a.WriteFile(ctx, h, "/deep/dir/f", 0o600, io.MultiReader(bytes.NewReader([]byte("io")), bytes.NewReader([]byte("data")))))
	got, ok := a.File("box", "/deep/dir/f")
	require.True(t, ok)
	assert.Equal(t, "iodata", string(got), "the stored content is the concatenation")
	rc, err := a.ReadFile(ctx, h, "/deep/dir/f")
	require.NoError(t, err)
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	assert.Equal(t, "iodata", string(b))

	_, err = a.ReadFile(ctx, h, "/missing")
	require.ErrorIs(t, err, paddock.ErrNotFound)
	require.ErrorIs(t, a.WriteFile(ctx, a.BuildHandle("nope"), "/f", 0o644, bytes.NewReader(nil)), paddock.ErrNotFound)
	require.ErrorIs(t, a.WriteFile(ctx, h, "relative", 0o644, bytes.NewReader(nil)), paddock.ErrInvalid)
	_, ok = a.File("nope", "/f")
	assert.False(t, ok)
}

func TestMissingSandbox(t *testing.T) {
	t.Parallel()
	a := world(t)
	missing := a.BuildHandle("nope")
	_, err := a.PublicURL(ctx, missing)
	require.ErrorIs(t, err, paddock.ErrNotFound)
	require.ErrorIs(t, a.Suspend(ctx, missing), paddock.ErrNotFound)
	_, err = a.Resume(ctx, missing)
	require.ErrorIs(t, err, paddock.ErrNotFound)
	_, err = a.ListSessions(ctx, missing)
	require.ErrorIs(t, err, paddock.ErrNotFound)
	_, err = a.Attach(ctx, missing, "fake-sess-1", paddock.AttachOpts{})
	require.ErrorIs(t, err, paddock.ErrNotFound)

	h := box(t, a, "box")
	_, err = a.Attach(ctx, h, "fake-sess-999", paddock.AttachOpts{})
	require.ErrorIs(t, err, paddock.ErrNotFound, "an unknown session")
	url, err := a.PublicURL(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, "https://box.fake.test", url)
}

func TestSuspendResume(t *testing.T) {
	t.Parallel()
	a := world(t)
	h := box(t, a, "box")
	require.NoError(t, a.Suspend(ctx, h))
	info, err := a.Get(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, paddock.StatusSuspended, info.Status)
	h2, err := a.Resume(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, h, h2)
	info, err = a.Get(ctx, h2)
	require.NoError(t, err)
	assert.Equal(t, paddock.StatusRunning, info.Status)
}

func TestCheckpointsAreNotSupported(t *testing.T) {
	t.Parallel()
	a := world(t)
	missing := a.BuildHandle("nope")
	_, err := paddock.CreateCheckpoint(ctx, a, missing, paddock.CheckpointOpts{})
	require.ErrorIs(t, err, paddock.ErrNotSupported, "no existence check")
	require.ErrorIs(t, paddock.RestoreCheckpoint(ctx, a, missing, "cp"), paddock.ErrNotSupported)
	_, isCheckpointer := any(a).(paddock.Checkpointer)
	assert.False(t, isCheckpointer, "the fake offers no checkpoints, so it writes no stubs for them")
}

func TestWorldsAreIndependent(t *testing.T) {
	t.Parallel()
	one, two := world(t), world(t)
	box(t, one, "box")
	names, err := two.ListAllNames(ctx)
	require.NoError(t, err)
	assert.Empty(t, names)
	h1, err := one.CreateNew(ctx, "a", paddock.CreateNewOpts{})
	require.NoError(t, err)
	h2, err := two.CreateNew(ctx, "a", paddock.CreateNewOpts{})
	require.NoError(t, err)
	assert.Equal(t, "fake-1", h1.InstanceID)
	assert.Equal(t, "fake-1", h2.InstanceID, "each world counts on its own")
}

func TestReset(t *testing.T) {
	t.Parallel()
	a := fake.New()
	h := box(t, a, "box")
	st := script(t, a, h, "out:ready", "stay")
	next(t, st)
	a.Reset()
	assert.Equal(t, []string{"error:unavailable: closed_before_exit"}, text(drain(t, st)), "a reset stops commands with an error, never silence")
	names, err := a.ListAllNames(ctx)
	require.NoError(t, err)
	assert.Empty(t, names)
}

func TestListSessionsIncludesFinished(t *testing.T) {
	t.Parallel()
	a := world(t)
	h := box(t, a, "box")
	done := script(t, a, h, "out:x")
	drain(t, done)
	live := script(t, a, h, "out:ready", "stay")
	next(t, live)
	sessions, err := a.ListSessions(ctx, h)
	require.NoError(t, err)
	byID := map[string]paddock.Session{}
	for _, s := range sessions {
		byID[s.ID] = s
		assert.Regexp(t, `^fake-sess-[1-9][0-9]*$`, s.ID)
		assert.NoError(t, paddock.ValidateSessionID(s.ID))
	}
	require.Len(t, byID, 2)
	assert.Equal(t, "emit out:x", byID[done.SessionID()].Command, "the full command line")
	assert.Equal(t, "emit out:ready stay", byID[live.SessionID()].Command)
	assert.False(t, byID[done.SessionID()].CreatedAt.IsZero())
}

func TestPreviews(t *testing.T) {
	t.Parallel()
	a := world(t)
	h := box(t, a, "box")
	other := box(t, a, "other")
	p, err := a.Expose(ctx, h, 3000, paddock.ExposeOpts{})
	require.NoError(t, err)
	assert.Equal(t, "https://box.fake.test/preview/3000/", p.URL)
	assert.True(t, a.PreviewValid(p))
	assert.False(t, a.PreviewValid(paddock.Preview{Port: 3001, Token: p.Token}), "port-scoped")

	require.ErrorIs(t, a.Revoke(ctx, other, p), paddock.ErrInvalid, "another sandbox's token is refused")
	assert.True(t, a.PreviewValid(p))
	require.NoError(t, a.Revoke(ctx, h, p))
	assert.False(t, a.PreviewValid(p))

	p2, err := a.Expose(ctx, h, 3000, paddock.ExposeOpts{})
	require.NoError(t, err)
	assert.NotEqual(t, p.Token.Reveal(), p2.Token.Reveal(), "every token is unique")
	_, err = a.Expose(ctx, h, 0, paddock.ExposeOpts{})
	require.ErrorIs(t, err, paddock.ErrInvalid)
}

// The fake registered under each hosted provider's slot: every call
// dispatches through the registry on the tag the caller passes
// (docs/contract.md#registry). The runtime's facade repeats this test through its own
// dispatch.
func TestFakeUnderHostedProviderSlots(t *testing.T) {
	t.Parallel()
	for _, p := range []paddock.Provider{paddock.ProviderSprites, paddock.ProviderE2B, paddock.ProviderDaytona} {
		t.Run(string(p), func(t *testing.T) {
			f := fake.New()
			t.Cleanup(f.Reset)
			reg := paddock.Registry{p: f}
			dispatch := func(tag paddock.Provider) paddock.Adapter {
				a, err := reg.Lookup(tag)
				require.NoError(t, err)
				return a
			}

			h, err := dispatch(p).Create(ctx, "box", paddock.CreateOpts{})
			require.NoError(t, err)
			assert.Equal(t, paddock.ProviderFake, h.Provider, "the fake tags its own handles")
			h.Provider = p // the caller re-tags; dispatch follows the tag

			res, err := dispatch(h.Provider).Exec(ctx, h, paddock.NewCmd("emit", "out:out", "err:err", "exit:4"), paddock.ExecOpts{StderrToStdout: true})
			require.NoError(t, err)
			assert.Equal(t, "outerr", string(res.Stdout))
			assert.Equal(t, 4, res.ExitCode)

			st, err := dispatch(h.Provider).Spawn(ctx, h, paddock.NewCmd("emit", "stay"), paddock.SpawnOpts{Stdin: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			require.NoError(t, st.WriteStdin(ctx, []byte("in"+"put")))
			assert.Equal(t, []string{"stdout:echo:input"}, text([]paddock.Event{next(t, st)}))
			require.NoError(t, st.CloseStdin(ctx))
			assert.Equal(t, []string{"exit:0"}, text(drain(t, st)))

			runner, err := dispatch(h.Provider).Spawn(ctx, h, paddock.NewCmd("runner", "stay"), paddock.SpawnOpts{Stdin: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = runner.Close() })
			sessions, err := dispatch(h.Provider).ListSessions(ctx, h)
			require.NoError(t, err)
			var id string
			for _, s := range sessions {
				if s.Command == "runner stay" {
					id = s.ID
				}
			}
			require.NotEmpty(t, id, "the session is found by its command line")
			att, err := dispatch(h.Provider).Attach(ctx, h, id, paddock.AttachOpts{Stdin: true})
			require.NoError(t, err)
			t.Cleanup(func() { _ = att.Close() })
			require.NoError(t, runner.CloseStdin(ctx))
			assert.Equal(t, []string{"exit:0"}, text(drain(t, runner)))
			assert.Equal(t, []string{"exit:0"}, text(drain(t, att)), "both subscriptions get the exit")

			_, err = paddock.CreateCheckpoint(ctx, dispatch(h.Provider), h, paddock.CheckpointOpts{})
			require.ErrorIs(t, err, paddock.ErrNotSupported)
			require.ErrorIs(t, paddock.RestoreCheckpoint(ctx, dispatch(h.Provider), h, "cp"), paddock.ErrNotSupported)
			assert.Equal(t, "/w/x", paddock.HostPath(dispatch(h.Provider), h, "/w/x"), "HostPath is the identity")

			require.NoError(t, dispatch(h.Provider).Destroy(ctx, h))
			_, err = dispatch(h.Provider).Get(ctx, h)
			require.ErrorIs(t, err, paddock.ErrNotFound)

			var unknown *paddock.UnknownProviderError
			_, err = reg.Lookup("nope")
			require.ErrorAs(t, err, &unknown, "an unknown tag fails loudly")
			assert.Equal(t, []paddock.Provider{p}, unknown.Configured)
		})
	}
}

func TestTwoHundredConcurrentSpawns(t *testing.T) {
	t.Parallel()
	a := world(t)
	h := box(t, a, "box")
	const n = 200
	var wg sync.WaitGroup
	got := make([][]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := strconv.Itoa(i)
			st, err := a.Spawn(ctx, h, paddock.NewCmd("emit", "out:"+id+"-a", "err:"+id+"-b", "out:"+id+"-c", "exit:"+strconv.Itoa(i%256)), paddock.SpawnOpts{})
			if !assert.NoError(t, err) {
				return
			}
			defer st.Close()
			got[i] = text(drain(t, st))
		}()
	}
	wg.Wait()
	for i := range n {
		id := strconv.Itoa(i)
		assert.Equal(t, []string{"stdout:" + id + "-a", "stderr:" + id + "-b", "stdout:" + id + "-c", "exit:" + strconv.Itoa(i%256)}, got[i],
			"spawn %d receives exactly its own frames and one terminal", i)
	}
	sessions, err := a.ListSessions(ctx, h)
	require.NoError(t, err)
	assert.Len(t, sessions, n)
}

// TestAttachRacingLiveOutput attaches while another goroutine drives live
// output, 1,000 times: every attacher must see the whole history exactly
// once, in order, with no gap and no duplicate at the replay / tail seam.
func TestAttachRacingLiveOutput(t *testing.T) {
	t.Parallel()
	a := world(t)
	h := box(t, a, "box")
	const iterations, lines = 1000, 20
	want := []string{"stdout:ready"}
	for j := range lines {
		want = append(want, fmt.Sprintf("stdout:echo:%d", j))
	}
	want = append(want, "exit:0")
	rnd := rand.New(rand.NewPCG(3, 4))

	for i := range iterations {
		st, err := a.Spawn(ctx, h, paddock.NewCmd("emit", "out:ready", "stay"), paddock.SpawnOpts{Stdin: true})
		require.NoError(t, err)
		attachAfter := rnd.IntN(lines + 1)
		attached := make(chan paddock.Stream, 1)
		go func() {
			defer close(attached)
			for j := range lines {
				if j == attachAfter {
					att, err := a.Attach(ctx, h, st.SessionID(), paddock.AttachOpts{})
					if !assert.NoError(t, err) {
						return
					}
					attached <- att
				}
				if !assert.NoError(t, st.WriteStdin(ctx, []byte(strconv.Itoa(j)))) {
					return
				}
			}
			if attachAfter == lines {
				att, err := a.Attach(ctx, h, st.SessionID(), paddock.AttachOpts{})
				if assert.NoError(t, err) {
					attached <- att
				}
			}
			assert.NoError(t, st.CloseStdin(ctx))
		}()
		original := text(drain(t, st))
		att, ok := <-attached
		require.True(t, ok, "iteration %d: no attacher", i)
		require.Equal(t, want, original, "iteration %d: the original", i)
		require.Equal(t, want, text(drain(t, att)), "iteration %d: the attacher (attached before write %d)", i, attachAfter)
		require.NoError(t, att.Close())
		require.NoError(t, st.Close())
	}
}
