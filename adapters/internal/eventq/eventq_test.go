package eventq

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestQueue(t *testing.T) {
	q := New(2)
	ctx := context.Background()
	require.True(t, q.Emit(paddock.Stdout([]byte("a"))))
	require.True(t, q.Emit(paddock.Exit(3)))
	ev, err := q.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, paddock.Stdout([]byte("a")), ev)
	ev, err = q.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, paddock.Exit(3), ev)
	_, err = q.Next(ctx)
	require.ErrorIs(t, err, io.EOF, "nothing after the terminal event")

	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	_, err = New(1).Next(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestCloseEndsBothSides(t *testing.T) {
	q := New(1)
	require.True(t, q.Emit(paddock.Stdout([]byte("queued"))))
	blocked := make(chan bool)
	go func() { blocked <- q.Emit(paddock.Stdout([]byte("no room"))) }()
	ev, ok := q.TryNext()
	require.True(t, ok)
	require.Equal(t, "queued", string(ev.Data))
	require.True(t, q.Close())
	require.False(t, q.Close(), "once")
	select {
	case <-blocked: // it found room or gave up; either way it returned
	case <-time.After(time.Minute):
		t.Fatal("Emit stayed blocked after Close")
	}
	_, err := q.Next(context.Background())
	require.ErrorIs(t, err, io.EOF, "a detached queue answers EOF, not a terminal event")
	require.True(t, q.Closed())
}
