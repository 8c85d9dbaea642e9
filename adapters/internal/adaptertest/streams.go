package adaptertest

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

// Drain reads st to its terminal event within limit: the stdout and
// stderr before it, and the event. A failed Next fails the test.
func Drain(t testing.TB, st paddock.Stream, limit time.Duration) (stdout, stderr string, last paddock.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	for {
		ev, err := st.Next(ctx)
		require.NoError(t, err)
		switch ev.Kind {
		case paddock.EventStdout:
			stdout += string(ev.Data)
		case paddock.EventStderr:
			stderr += string(ev.Data)
		default:
			return stdout, stderr, ev
		}
	}
}

// StdoutUntil reads st until its stdout holds want, within limit, and
// answers that stdout; stderr may come between, anything else fails the
// test.
func StdoutUntil(t testing.TB, st paddock.Stream, want string, limit time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var got string
	for !strings.Contains(got, want) {
		ev, err := st.Next(ctx)
		require.NoError(t, err, "waiting for %q, got %q", want, got)
		require.Contains(t, []paddock.EventKind{paddock.EventStdout, paddock.EventStderr}, ev.Kind, "waiting for %q, got %v", want, ev)
		if ev.Kind == paddock.EventStdout {
			got += string(ev.Data)
		}
	}
	return got
}

// Summary reads st to its end for a fault table: after an exit,
// "stdout|stderr|code" (and nothing may follow the exit); after an error
// event, "stdout|stderr" and the event's error; a stream that ends
// without either is an error.
func Summary(t testing.TB, st paddock.Stream, limit time.Duration) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var out, errb []byte
	for {
		ev, err := st.Next(ctx)
		switch {
		case errors.Is(err, io.EOF):
			return "", errors.New("the stream ended without a terminal event")
		case err != nil:
			return "", err
		}
		switch ev.Kind {
		case paddock.EventStdout:
			out = append(out, ev.Data...)
		case paddock.EventStderr:
			errb = append(errb, ev.Data...)
		case paddock.EventExit:
			_, err := st.Next(ctx)
			require.ErrorIs(t, err, io.EOF, "nothing follows the exit")
			return string(out) + "|" + string(errb) + "|" + strconv.Itoa(ev.Code), nil
		case paddock.EventError:
			return string(out) + "|" + string(errb), ev.Err
		}
	}
}
