package perf

import (
	"context"
	"encoding/binary"
	"io"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The firehose hands out its chunks, each carrying its index, then the
// exit, then io.EOF; every chunk is its own allocation.
func TestHose(t *testing.T) {
	t.Parallel()
	h := NewHose(3, 64)
	st := h.Stream()
	var chunks [][]byte
	for {
		ev, err := st.Next(context.Background())
		require.NoError(t, err)
		if ev.Kind == paddock.EventExit {
			break
		}
		chunks = append(chunks, ev.Data)
	}
	require.Len(t, chunks, 3)
	for i, c := range chunks {
		assert.Len(t, c, 64)
		assert.EqualValues(t, i, binary.BigEndian.Uint64(c))
		assert.Equal(t, HoseChunk(i, 64), c)
	}
	chunks[0][10] = 'x'
	assert.NotEqual(t, chunks[0], HoseChunk(0, 64), "chunks are not shared")
	_, err := st.Next(context.Background())
	assert.ErrorIs(t, err, io.EOF)
	assert.EqualValues(t, 3, h.Read())
}

func TestGoals(t *testing.T) {
	t.Parallel()
	f := Figure{Value: 0.3}
	atLeast(&f, 0.2)
	assert.True(t, f.Holds)
	assert.Equal(t, ">= 0.2", f.Goal)
	atMost(&f, 0.2)
	assert.False(t, f.Holds)
	assert.Equal(t, "<= 0.2", f.Goal)
	aimAtLeast(&f, 0.4)
	assert.Equal(t, ">= 0.4", f.Aim)
	require.NotNil(t, f.AimMet)
	assert.False(t, *f.AimMet)
	aimAtLeast(&f, 0.25)
	assert.True(t, *f.AimMet)
}

func TestMedian(t *testing.T) {
	t.Parallel()
	cases := []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{9, 1, 5}, 5},
		{[]float64{0.9, 0.1, 0.7, 0.3}, 0.5},
		{[]float64{100, 0.8, 0.9, 0.01, 0.85}, 0.85}, // one outlier each way moves nothing
	}
	for _, c := range cases {
		assert.InDelta(t, c.want, median(c.xs), 1e-9, "%v", c.xs)
	}
}

// A small run of the runtime figures: each measures both sides and says
// whether its goal holds (the numbers themselves are the bench's).
func TestRuntimeFiguresRun(t *testing.T) {
	t.Parallel()
	f, err := Frames(1024, 1)
	require.NoError(t, err)
	assert.Positive(t, f.Details["runtime_frames_per_s"])
	assert.Positive(t, f.Details["raw_send_frames_per_s"])
	r, err := Stream(64, 1024, 1)
	require.NoError(t, err)
	assert.Positive(t, r.Runtime)
	assert.Positive(t, r.Ratio)
	rr, err := RemoteStream(64, 32<<10, 1)
	require.NoError(t, err)
	assert.Positive(t, rr.Remote)
	assert.Positive(t, rr.Local)
	rc, err := RemoteCommand(1<<20, 32<<10, 1)
	require.NoError(t, err)
	assert.Positive(t, rc.Paddock)
	assert.Positive(t, rc.Raw)
	s, err := SlowOwner(512, 1024)
	require.NoError(t, err)
	assert.LessOrEqual(t, s.Details["chunks_read"], 65.0, "the reader stops at the window")
}

// The checkpoint figures measure both sides and compare them.
func TestLocalCheckpointFigures(t *testing.T) {
	t.Parallel()
	figures, err := LocalCheckpointFigures(8<<20, 1)
	require.NoError(t, err)
	require.Len(t, figures, 2)
	for _, f := range figures {
		assert.Positive(t, f.Value, f.Name)
		assert.Equal(t, "<= 1.2", f.Goal, f.Name)
	}
}
