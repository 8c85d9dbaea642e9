package paddock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/clocktest"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failing returns a function that fails with errs in turn (then succeeds),
// counting calls.
func failing(calls *int, errs ...error) func(context.Context) error {
	return func(context.Context) error {
		*calls++
		if *calls <= len(errs) {
			return errs[*calls-1]
		}
		return nil
	}
}

func TestWithBackoffAttempts(t *testing.T) {
	t.Parallel()
	unavailable := &paddock.UnavailableError{Detail: "http", Status: 503}
	tests := map[string]struct {
		attempts  int
		errs      []error
		wantCalls int
		wantErr   error
	}{
		"success first time":              {0, nil, 1, nil},
		"default 3 attempts, all fail":    {0, []error{unavailable, unavailable, unavailable, unavailable}, 3, unavailable},
		"succeeds on the third":           {0, []error{unavailable, unavailable}, 3, nil},
		"5 attempts":                      {5, []error{unavailable, unavailable, unavailable, unavailable, unavailable, unavailable}, 5, unavailable},
		"1 attempt means no retry":        {1, []error{unavailable}, 1, unavailable},
		"permanent error is not retried":  {0, []error{paddock.ErrNotFound}, 1, paddock.ErrNotFound},
		"invalid is not retried":          {5, []error{&paddock.InvalidError{Detail: "x"}}, 1, paddock.ErrInvalid},
		"unknown error is retried":        {0, []error{errors.New("odd"), errors.New("odd")}, 3, nil},
		"rate limited is retried":         {0, []error{&paddock.RateLimitedError{}}, 2, nil},
		"permanent after transient stops": {0, []error{unavailable, paddock.ErrDenied}, 2, paddock.ErrDenied},
		"command exited is retried (3.2)": {0, []error{paddock.ErrCommandExited}, 2, nil},
		"unknown provider is not retried": {0, []error{&paddock.UnknownProviderError{Provider: "x"}}, 1, nil},
		"unsupported url is not retried":  {0, []error{paddock.ErrNoPublicURL}, 1, paddock.ErrNoPublicURL},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			calls := 0
			err := paddock.WithBackoff(context.Background(), failing(&calls, tc.errs...),
				paddock.BackoffOpts{Attempts: tc.attempts, Clock: clocktest.New()})
			assert.Equal(t, tc.wantCalls, calls)
			switch {
			case name == "unknown provider is not retried":
				var up *paddock.UnknownProviderError
				require.ErrorAs(t, err, &up)
			case tc.wantErr == nil:
				require.NoError(t, err)
			default:
				require.ErrorIs(t, err, tc.wantErr)
			}
		})
	}
}

func TestWithBackoffReturnsLastErrorUnchanged(t *testing.T) {
	t.Parallel()
	last := &paddock.UnavailableError{Detail: "third"}
	calls := 0
	err := paddock.WithBackoff(context.Background(),
		failing(&calls, &paddock.UnavailableError{Detail: "first"}, &paddock.UnavailableError{Detail: "second"}, last),
		paddock.BackoffOpts{Clock: clocktest.New()})
	assert.Same(t, last, err)
}

func TestWithBackoffCustomClassifier(t *testing.T) {
	t.Parallel()
	calls := 0
	err := paddock.WithBackoff(context.Background(), failing(&calls, paddock.ErrNotFound, paddock.ErrNotFound),
		paddock.BackoffOpts{Clock: clocktest.New(), Retriable: func(error) bool { return true }})
	require.NoError(t, err)
	assert.Equal(t, 3, calls)
}

func TestWithBackoffDelays(t *testing.T) {
	t.Parallel()
	clock := clocktest.New()
	calls := 0
	errs := make([]error, 9)
	for i := range errs {
		errs[i] = paddock.ErrUnavailable
	}
	_ = paddock.WithBackoff(context.Background(), failing(&calls, errs...),
		paddock.BackoffOpts{Attempts: 7, Clock: clock, Rand: func(n int64) int64 { return n - 1 }})
	// With the top draw every delay equals its ceiling: 250, 500, 1000, 2000 (cap), 2000, 2000.
	assert.Equal(t, []time.Duration{250, 500, 1000, 2000, 2000, 2000}, msList(clock.Delays()))

	clock = clocktest.New()
	calls = 0
	_ = paddock.WithBackoff(context.Background(), failing(&calls, errs...),
		paddock.BackoffOpts{Attempts: 4, Clock: clock, Rand: func(int64) int64 { return 0 }})
	// The lowest draw is lifted to floor(ceiling/2).
	assert.Equal(t, []time.Duration{125, 250, 500}, msList(clock.Delays()))
}

func msList(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d / time.Millisecond
	}
	return out
}

func TestWithBackoffDelayBoundsOverManyDraws(t *testing.T) {
	t.Parallel()
	const draws = 2000
	rnd := rand.New(rand.NewPCG(1, 2))
	clock := clocktest.New()
	for i := 0; i < draws; i++ {
		calls := 0
		_ = paddock.WithBackoff(context.Background(),
			failing(&calls, paddock.ErrUnavailable, paddock.ErrUnavailable, paddock.ErrUnavailable, paddock.ErrUnavailable, paddock.ErrUnavailable),
			paddock.BackoffOpts{Attempts: 6, Clock: clock, Rand: rnd.Int64N})
	}
	ceilings := []time.Duration{250, 500, 1000, 2000, 2000}
	delays := clock.Delays()
	require.Len(t, delays, draws*len(ceilings))
	atFloor := make([]int, len(ceilings))
	aboveFloor := make([]map[time.Duration]bool, len(ceilings))
	for i := range aboveFloor {
		aboveFloor[i] = map[time.Duration]bool{}
	}
	for i, delay := range delays {
		n := i % len(ceilings)
		ceiling := ceilings[n] * time.Millisecond
		require.GreaterOrEqual(t, delay, ceiling/2, "delay %d before attempt %d", i, n+2)
		require.LessOrEqual(t, delay, ceiling, "delay %d before attempt %d", i, n+2)
		require.Zero(t, delay%time.Millisecond, "delays are whole milliseconds")
		if delay == ceiling/2 {
			atFloor[n]++
		} else {
			aboveFloor[n][delay] = true
		}
	}
	for n := range ceilings {
		// About half the draws land on the floor, the rest spread above it.
		assert.InDelta(t, draws/2, atFloor[n], draws/10, "floor share before attempt %d", n+2)
		assert.Greater(t, len(aboveFloor[n]), 50, "spread above the floor before attempt %d", n+2)
	}
}

func TestWithBackoffPanics(t *testing.T) {
	t.Parallel()
	t.Run("retried regardless of the classifier, then success", func(t *testing.T) {
		calls := 0
		err := paddock.WithBackoff(context.Background(), func(context.Context) error {
			calls++
			if calls < 3 {
				panic("boom")
			}
			return nil
		}, paddock.BackoffOpts{Clock: clocktest.New(), Retriable: func(error) bool { return false }})
		require.NoError(t, err)
		assert.Equal(t, 3, calls)
	})
	t.Run("re-raised after the last attempt", func(t *testing.T) {
		calls := 0
		sentinel := errors.New("original panic value")
		assert.PanicsWithValue(t, sentinel, func() {
			_ = paddock.WithBackoff(context.Background(), func(context.Context) error {
				calls++
				panic(sentinel)
			}, paddock.BackoffOpts{Clock: clocktest.New()})
		})
		assert.Equal(t, 3, calls)
	})
	t.Run("a single attempt panics straight through", func(t *testing.T) {
		assert.PanicsWithValue(t, "once", func() {
			_ = paddock.WithBackoff(context.Background(), func(context.Context) error { panic("once") },
				paddock.BackoffOpts{Attempts: 1, Clock: clocktest.New()})
		})
	})
}

func TestWithBackoffContextCancellation(t *testing.T) {
	t.Parallel()
	t.Run("ends the wait at once", func(t *testing.T) {
		clock := clocktest.Frozen() // the delay never elapses on its own
		asked := make(chan time.Duration, 1)
		clock.NotifyAfter(asked)
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		done := make(chan error, 1)
		go func() {
			done <- paddock.WithBackoff(ctx, failing(&calls, paddock.ErrUnavailable, paddock.ErrUnavailable),
				paddock.BackoffOpts{Clock: clock})
		}()
		<-asked // WithBackoff is waiting now
		cancel()
		select {
		case err := <-done:
			require.ErrorIs(t, err, context.Canceled)
			require.ErrorIs(t, err, paddock.ErrUnavailable, "the last error is kept")
		case <-time.After(time.Minute):
			t.Fatal("WithBackoff did not return on cancellation")
		}
		assert.Equal(t, 1, calls)
	})
	t.Run("a cancelled context makes no call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		calls := 0
		err := paddock.WithBackoff(ctx, failing(&calls), paddock.BackoffOpts{Clock: clocktest.New()})
		require.ErrorIs(t, err, context.Canceled)
		assert.Zero(t, calls)
	})
}

func TestWithBackoffOptionValidation(t *testing.T) {
	t.Parallel()
	tests := map[string]paddock.BackoffOpts{
		"negative attempts": {Attempts: -1},
		"negative base":     {Base: -time.Millisecond},
		"sub-ms base":       {Base: time.Microsecond},
		"fractional base":   {Base: 1500 * time.Microsecond},
		"negative max":      {Max: -1},
	}
	for name, opts := range tests {
		t.Run(name, func(t *testing.T) {
			calls := 0
			err := paddock.WithBackoff(context.Background(), failing(&calls), opts)
			require.ErrorIs(t, err, paddock.ErrInvalid)
			assert.Zero(t, calls, "nothing runs with bad options")
		})
	}
	calls := 0
	clock := clocktest.New()
	_ = paddock.WithBackoff(context.Background(), failing(&calls, paddock.ErrUnavailable),
		paddock.BackoffOpts{Base: time.Millisecond, Clock: clock, Rand: func(n int64) int64 { return n - 1 }})
	assert.Equal(t, []time.Duration{time.Millisecond}, clock.Delays(), "base 1ms is the smallest allowed")
}

func TestWithBackoffLogsEachRetry(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	calls := 0
	_ = paddock.WithBackoff(context.Background(), failing(&calls, paddock.ErrUnavailable, paddock.ErrUnavailable),
		paddock.BackoffOpts{Label: "get sandbox", Clock: clocktest.New(), Logger: zerolog.New(&buf),
			Rand: func(n int64) int64 { return n - 1 }})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2)
	for i, line := range lines {
		var entry map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &entry))
		assert.Equal(t, "warn", entry["level"])
		assert.Equal(t, "get sandbox", entry["label"])
		assert.EqualValues(t, i+1, entry["attempt"])
		assert.Equal(t, "unavailable", entry["reason"])
		assert.EqualValues(t, []float64{250, 500}[i], entry["delay"])
	}
}

func TestWithBackoffIsQuietByDefault(t *testing.T) {
	t.Parallel()
	// The zero Logger writes nothing; this only proves no panic and no global use.
	calls := 0
	err := paddock.WithBackoff(context.Background(), failing(&calls, paddock.ErrUnavailable), paddock.BackoffOpts{Clock: clocktest.New()})
	require.NoError(t, err)
}
