package sprites

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/eventq"
	"github.com/stretchr/testify/require"
)

// awaitInfo takes the info even when output decoded with it is already
// waiting, and leaves that output for Next.
func TestAwaitInfoLeavesTheEvents(t *testing.T) {
	t.Parallel()
	st := &stream{q: eventq.New(readAhead), info: make(chan sessionInfo, 1), ended: make(chan struct{})}
	st.info <- sessionInfo{ID: "20"}
	st.q.Emit(paddock.Stdout([]byte("first")))
	st.q.Emit(paddock.Exit(0))
	close(st.ended)
	for range 100 { // a select between ready channels picks at random
		info, err := st.awaitInfo(context.Background(), time.Second)
		require.NoError(t, err)
		require.Equal(t, "20", info.ID)
		st.info <- info
	}
	for _, want := range []paddock.Event{paddock.Stdout([]byte("first")), paddock.Exit(0)} {
		ev, ok := st.q.TryNext()
		require.True(t, ok, "no event was taken")
		require.Equal(t, want, ev)
	}
}

// A reader that ended without info reports why: its error event, or a
// command that ended first.
func TestAwaitInfoAfterTheReaderEnded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		events []paddock.Event
		want   error
	}{
		{"closed before anything", []paddock.Event{paddock.Failed(paddock.ErrClosedBeforeExit)}, paddock.ErrClosedBeforeExit},
		{"an exit before the info", []paddock.Event{paddock.Exit(3)}, paddock.ErrProvider},
		{"nothing at all", nil, paddock.ErrClosedBeforeExit},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := &stream{q: eventq.New(readAhead), info: make(chan sessionInfo, 1), ended: make(chan struct{})}
			for _, ev := range c.events {
				st.q.Emit(ev)
			}
			close(st.ended)
			_, err := st.awaitInfo(context.Background(), time.Second)
			require.ErrorIs(t, err, c.want)
		})
	}
}
