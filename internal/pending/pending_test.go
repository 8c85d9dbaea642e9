package pending_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/pending"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestQueue(t *testing.T) {
	t.Parallel()
	q := pending.New(func(v int) bool { return v < 0 })
	ctx := context.Background()
	assert.True(t, q.Push(1))
	assert.True(t, q.Push(2))
	v, err := q.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	got := make(chan int)
	go func() {
		_, _ = q.Next(ctx) // 2
		v, _ := q.Next(ctx)
		got <- v
	}()
	assert.True(t, q.Push(-1), "the terminal item")
	assert.Equal(t, -1, <-got, "a waiting Next takes what is pushed")
	_, err = q.Next(ctx)
	assert.ErrorIs(t, err, io.EOF, "after the terminal item")
	assert.False(t, q.Push(3), "nothing is queued after it")

	wait, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	idle := pending.New(func(int) bool { return false })
	_, err = idle.Next(wait)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	idle.Push(1)
	assert.True(t, idle.Close())
	assert.False(t, idle.Close(), "once")
	assert.True(t, idle.Closed())
	_, err = idle.Next(ctx)
	assert.ErrorIs(t, err, io.EOF, "a closed queue drops what it held")
	assert.False(t, idle.Push(2))
}
