package docker

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/eventq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// frame is one multiplexed frame of an exec's attach stream.
func frame(stream byte, data string) []byte {
	b := make([]byte, 8, 8+len(data))
	b[0] = stream
	binary.BigEndian.PutUint32(b[4:], uint32(len(data)))
	return append(b, data...)
}

// pumpOver runs a follower's pump over one end of a pipe; the engine's
// side is the other end.
func pumpOver(t *testing.T) (engine net.Conn, st *stream, result chan error) {
	t.Helper()
	ours, theirs := net.Pipe()
	t.Cleanup(func() { _ = theirs.Close(); _ = ours.Close() })
	st = &stream{q: eventq.New(readAhead), in: &attached{hj: client.HijackedResponse{Conn: ours}, reader: bufio.NewReader(ours)}}
	t.Cleanup(func() { st.q.Close() })
	result = make(chan error, 1)
	go func() {
		var sent [3]int
		_, err := st.pump(&sent)
		result <- err
	}()
	return theirs, st, result
}

// A follower whose ready line never comes is let go after followStuck
// (as end of stream, so the reader replaces it at the bytes delivered);
// one that said it is never cut, however long its journal stays quiet.
// Not parallel: it shortens followStuck.
func TestAFollowerThatNeverSaysReadyIsLetGo(t *testing.T) {
	defer func(d time.Duration) { followStuck = d }(followStuck)
	followStuck = 50 * time.Millisecond

	_, _, result := pumpOver(t)
	select {
	case err := <-result:
		require.ErrorIs(t, err, io.EOF, "cut by the watchdog, taken for an end to replace")
	case <-time.After(time.Minute):
		t.Fatal("a follower that never said ready held the stream")
	}

	engine, st, result := pumpOver(t)
	_, err := engine.Write(frame(muxStdout, followReady+"out0\n"))
	require.NoError(t, err)
	ctx := t.Context()
	ev, err := st.q.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, paddock.Event{Kind: paddock.EventStdout, Data: []byte("out0\n")}, ev)
	time.Sleep(10 * followStuck) // quiet well past the watchdog's time
	_, err = engine.Write(frame(muxStderr, "late\n"))
	require.NoError(t, err, "still attached")
	ev, err = st.q.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, paddock.Event{Kind: paddock.EventStderr, Data: []byte("late\n")}, ev)
	require.NoError(t, engine.Close())
	assert.ErrorIs(t, <-result, io.EOF)
}
