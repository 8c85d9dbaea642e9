package watchq_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/watchq"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ev(c paddock.FileChange, p string) paddock.FileEvent {
	return paddock.FileEvent{Change: c, Path: p}
}

// drain reads until an error and returns the events and that error.
func drain(t *testing.T, q *watchq.Queue) ([]paddock.FileEvent, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []paddock.FileEvent
	for {
		e, err := q.Next(ctx)
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
}

func TestQueue(t *testing.T) {
	t.Parallel()
	gone := errors.New("the directory was removed")
	cases := map[string]struct {
		limit int
		push  []paddock.FileEvent
		end   error
		want  []paddock.FileEvent
		err   error
	}{
		"in order, then the ending error": {limit: 10,
			push: []paddock.FileEvent{ev(paddock.FileCreated, "/a"), ev(paddock.FileWritten, "/a"), ev(paddock.FileRenamed, "/a"), ev(paddock.FileCreated, "/b")},
			end:  gone,
			want: []paddock.FileEvent{ev(paddock.FileCreated, "/a"), ev(paddock.FileWritten, "/a"), ev(paddock.FileRenamed, "/a"), ev(paddock.FileCreated, "/b")},
			err:  gone},
		"consecutive writes to one file merge; to two files they do not": {limit: 10,
			push: []paddock.FileEvent{ev(paddock.FileWritten, "/a"), ev(paddock.FileWritten, "/a"), ev(paddock.FileWritten, "/b"), ev(paddock.FileWritten, "/a")},
			end:  gone,
			want: []paddock.FileEvent{ev(paddock.FileWritten, "/a"), ev(paddock.FileWritten, "/b"), ev(paddock.FileWritten, "/a")},
			err:  gone},
		"past the limit the watch ends with watch_overflow after what it held": {limit: 2,
			push: []paddock.FileEvent{ev(paddock.FileCreated, "/a"), ev(paddock.FileCreated, "/b"), ev(paddock.FileCreated, "/c"), ev(paddock.FileCreated, "/d")},
			want: []paddock.FileEvent{ev(paddock.FileCreated, "/a"), ev(paddock.FileCreated, "/b")},
			err:  paddock.ErrWatchOverflow},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			q := watchq.NewWithLimit(c.limit)
			for _, e := range c.push {
				q.Push(e)
			}
			if c.end != nil {
				q.End(c.end)
			}
			got, err := drain(t, q)
			require.Equal(t, c.want, got)
			require.ErrorIs(t, err, c.err)
			select {
			case <-q.Done():
			default:
				t.Fatal("an ended queue tells its producer to stop")
			}
			require.False(t, q.Push(ev(paddock.FileCreated, "/late")), "nothing is taken after the end")
		})
	}
}

func TestCloseAndContext(t *testing.T) {
	t.Parallel()
	q := watchq.New()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := q.Next(ctx)
	require.ErrorIs(t, err, context.Canceled, "an empty queue waits only as long as the caller")

	got := make(chan error, 1)
	go func() {
		_, err := q.Next(context.Background())
		got <- err
	}()
	q.Push(ev(paddock.FileCreated, "/a"))
	require.NoError(t, <-got, "a waiting reader is woken by a change")
	q.Push(ev(paddock.FileCreated, "/b"))
	q.Close()
	_, err = q.Next(context.Background())
	require.ErrorIs(t, err, io.EOF, "after Close, io.EOF: what was queued is dropped")
	q.End(errors.New("late"))
	_, err = q.Next(context.Background())
	require.ErrorIs(t, err, io.EOF)
}
