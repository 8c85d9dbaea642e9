package fake_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
