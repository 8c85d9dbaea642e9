package actors_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/messages"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ownerActor collects frames and grants credit through actors.Credits.
type ownerActor struct {
	mu     sync.Mutex
	frames []messages.Frame
	count  atomic.Int64
}

func spawnOwner(e *actor.Engine, o *ownerActor) *actor.PID {
	credits := actors.NewCredits(0)
	return e.SpawnFunc(func(c *actor.Context) {
		if f, ok := c.Message().(messages.Frame); ok {
			o.mu.Lock()
			o.frames = append(o.frames, f)
			o.mu.Unlock()
			o.count.Add(1)
			credits.Consumed(c, f)
		}
	}, "owner")
}

func (o *ownerActor) snapshot() []messages.Frame {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]messages.Frame(nil), o.frames...)
}

func TestOwnerDeathDetachesTheCommand(t *testing.T) {
	t.Parallel()
	rt, f := startFake(t)
	events := watchEvents(t, rt.Engine())
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)

	o := &ownerActor{}
	owner := spawnOwner(rt.Engine(), o)
	cmd, session, err := rt.SpawnTo(ctx, owner, h, paddock.NewCmd("emit", "out:ready", "stay"), paddock.SpawnOpts{Stdin: true}, 0)
	require.NoError(t, err)

	// Keep output flowing, and kill the owner in the middle of it; the
	// writer goes on until the detach answers command_exited.
	const lines = 1_000_000
	var wrote atomic.Int64
	stopWriting := make(chan struct{})
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for i := 0; i < lines; i++ {
			select {
			case <-stopWriting:
				return
			default:
			}
			if err := rt.Controls(cmd).WriteStdin(ctx, []byte(fmt.Sprintf("%d;", i))); err != nil {
				assert.ErrorIs(t, err, paddock.ErrCommandExited, "after the detach writes answer command_exited")
				return
			}
			wrote.Add(1)
		}
	}()
	require.Eventually(t, func() bool { return o.count.Load() >= 100 }, time.Minute, time.Millisecond)
	deadBefore := events.deadLetters()
	<-rt.Engine().Poison(owner).Done()
	select { // the writer ends when the detach answers command_exited
	case <-writerDone:
	case <-time.After(time.Minute):
		close(stopWriting)
		<-writerDone
		require.Fail(t, "the dead owner's subscription was not detached")
	}
	require.Less(t, wrote.Load(), int64(lines), "the writer stopped on command_exited, not at its end")
	// Two flushes: a dead letter made while the first marker is handed out
	// is itself handed out before the second.
	events.flush(t)
	events.flush(t)
	t.Logf("dead letters after the owner stopped: %d; writes before the detach: %d", events.deadLetters()-deadBefore, wrote.Load())
	assert.LessOrEqual(t, events.deadLetters()-deadBefore, rt.Window(),
		"at most the frames in flight to the owner die: no dead-letter storm after it stopped")

	// Detached, not killed: the process lives and a new attacher replays it all.
	assert.True(t, f.SessionLive("box", session), "the command keeps running")
	require.ErrorIs(t, rt.Controls(cmd).WriteStdin(ctx, []byte("late")), paddock.ErrCommandExited, "the dead owner's subscription is detached")
	att, err := attach(rt, ctx, h, session, paddock.AttachOpts{Stdin: true})
	require.NoError(t, err)
	defer att.Close()
	var replay strings.Builder
	want := "ready"
	for i := int64(0); i < wrote.Load(); i++ {
		want += fmt.Sprintf("echo:%d;", i)
	}
	for replay.Len() < len(want) {
		replay.Write(frame(t, att).(*messages.Stdout).GetData())
	}
	assert.Equal(t, want, replay.String(), "the replay has everything, from byte zero, once")
	require.NoError(t, att.CloseStdin(ctx))
	rest := all(t, att)
	require.Len(t, rest, 1)
	assert.Equal(t, "exit:0", terminalText(rest[0]))
}

func TestThousandConcurrentCommands(t *testing.T) {
	t.Parallel()
	rt, _ := startFake(t)
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	const n = 1000
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := itoa(i)
			s, err := spawn(rt, ctx, h, paddock.NewCmd("emit", "out:"+id+"-a", "err:"+id+"-b", "out:"+id+"-c", "exit:"+itoa(i%256)), paddock.SpawnOpts{})
			if !assert.NoError(t, err) {
				return
			}
			frames := all(t, s)
			if !assert.Len(t, frames, 4, "command %d", i) {
				return
			}
			ref := string(s.Subscription().Ref)
			for j, f := range frames {
				assert.Equal(t, ref, f.GetRef(), "command %d frame %d carries its own ref", i, j)
				assert.Equal(t, uint64(j+1), f.GetSeq(), "command %d: contiguous seq", i)
			}
			assert.Equal(t, id+"-a", string(frames[0].(*messages.Stdout).GetData()))
			assert.Equal(t, id+"-b", string(frames[1].(*messages.Stderr).GetData()))
			assert.Equal(t, id+"-c", string(frames[2].(*messages.Stdout).GetData()))
			assert.Equal(t, "exit:"+itoa(i%256), terminalText(frames[3]))
			assert.Equal(t, uint64(3), frames[3].(*messages.Exit).GetOutputFrames())
		}()
	}
	wg.Wait()
}

func TestShutdownWithLiveCommands(t *testing.T) {
	t.Parallel()
	rt, f := startFake(t)
	h, err := rt.Adapter("fake").Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	const n = 100
	streams := make([]*actors.FrameStream, n)
	o := &ownerActor{}
	owner := spawnOwner(rt.Engine(), o)
	defer func() { <-rt.Engine().Poison(owner).Done() }()
	for i := range n {
		if i%2 == 0 {
			streams[i], err = spawn(rt, ctx, h, paddock.NewCmd("emit", "out:ready", "stay"), paddock.SpawnOpts{Stdin: true})
			require.NoError(t, err)
			frame(t, streams[i])
			continue
		}
		_, _, err := rt.SpawnTo(ctx, owner, h, paddock.NewCmd("emit", "out:ready", "stay"), paddock.SpawnOpts{Stdin: true}, 0)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return o.count.Load() == n/2 }, time.Minute, time.Millisecond)

	terminals := make(chan string, n)
	var readers sync.WaitGroup
	for _, s := range streams {
		if s == nil {
			continue
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			for _, fr := range all(t, s) {
				terminals <- terminalText(fr)
			}
		}()
	}
	sctx, cancel := contextWithTimeout(5 * time.Second)
	defer cancel()
	start := time.Now()
	require.NoError(t, rt.Shutdown(sctx), "shutdown finishes within its deadline")
	t.Logf("shutdown with %d live commands took %s", n, time.Since(start))
	readers.Wait()
	close(terminals)
	// Frames to the actor owner were sent before Shutdown returned; it may
	// still be handling them.
	require.Eventually(t, func() bool { return o.count.Load() == n }, time.Minute, time.Millisecond)
	got := 0
	for term := range terminals {
		assert.Equal(t, "error:stopped_before_exit", term)
		got++
	}
	for _, fr := range o.snapshot()[n/2:] {
		assert.Equal(t, "error:stopped_before_exit", terminalText(fr))
		got++
	}
	assert.Equal(t, n, got, "every live command's subscriber got exactly one terminal frame")
	assert.Len(t, o.snapshot(), n, "the actor owner got one terminal frame per command after its output")
	f.Reset()
}
