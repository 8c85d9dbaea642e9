package paddock_test

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/clocktest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExecDeadline(t *testing.T) {
	t.Parallel()
	t.Run("zero timeout is expired before anything starts", func(t *testing.T) {
		dl := paddock.StartExecDeadline(paddock.Duration(0), clocktest.New())
		assert.True(t, dl.Finite())
		assert.True(t, dl.Expired())
		var et *paddock.ExecTimeoutError
		require.ErrorAs(t, dl.Err(), &et)
		assert.Equal(t, time.Duration(0), et.Timeout)
	})
	t.Run("infinite never expires", func(t *testing.T) {
		clock := clocktest.New()
		dl := paddock.StartExecDeadline(nil, clock)
		clock.Advance(1000 * time.Hour)
		assert.False(t, dl.Finite())
		assert.False(t, dl.Expired())
		assert.Equal(t, time.Duration(-1), dl.Remaining())
		assert.Nil(t, dl.C(), "a nil channel blocks forever in a select")
	})
	t.Run("remaining shrinks; the error keeps the original timeout", func(t *testing.T) {
		clock := clocktest.New()
		dl := paddock.StartExecDeadline(paddock.Duration(100*time.Millisecond), clock)
		assert.Equal(t, 100*time.Millisecond, dl.Remaining())
		clock.Advance(60 * time.Millisecond)
		assert.Equal(t, 40*time.Millisecond, dl.Remaining())
		assert.False(t, dl.Expired())
		clock.Advance(40 * time.Millisecond)
		assert.Equal(t, time.Duration(0), dl.Remaining())
		assert.True(t, dl.Expired())
		clock.Advance(time.Hour)
		assert.Equal(t, time.Duration(0), dl.Remaining(), "remaining never goes negative")
		var et *paddock.ExecTimeoutError
		require.ErrorAs(t, dl.Err(), &et)
		assert.Equal(t, 100*time.Millisecond, et.Timeout)
		assert.ErrorIs(t, dl.Err(), paddock.ErrExecTimeout)
		assert.True(t, paddock.IsTransient(dl.Err()))
	})
	t.Run("C waits only the remaining budget", func(t *testing.T) {
		clock := clocktest.New()
		dl := paddock.StartExecDeadline(paddock.Duration(time.Second), clock)
		clock.Advance(700 * time.Millisecond)
		<-dl.C()
		assert.Equal(t, []time.Duration{300 * time.Millisecond}, clock.Delays())
		assert.True(t, dl.Expired())
	})
	t.Run("the system clock is the default", func(t *testing.T) {
		dl := paddock.StartExecDeadline(paddock.Duration(time.Hour), nil)
		assert.False(t, dl.Expired())
		assert.InDelta(t, float64(time.Hour), float64(dl.Remaining()), float64(time.Minute))
	})
}

func TestExecDeadlineContext(t *testing.T) {
	t.Parallel()
	clock := clocktest.New()
	dl := paddock.StartExecDeadline(paddock.Duration(time.Hour), clock)
	clock.Advance(59 * time.Minute)
	ctx, cancel := dl.Context(context.Background())
	defer cancel()
	at, ok := ctx.Deadline()
	require.True(t, ok)
	assert.InDelta(t, time.Minute, time.Until(at), float64(5*time.Second), "bounded by what remains")

	ctx, cancel = paddock.StartExecDeadline(nil, clock).Context(context.Background())
	defer cancel()
	_, ok = ctx.Deadline()
	assert.False(t, ok, "an infinite deadline adds none")
}

func TestStartExecValidatesThenAnswersASpentBudget(t *testing.T) {
	t.Parallel()
	sh := paddock.NewCmd("sh", "-c", "true")
	for name, tc := range map[string]struct {
		cmd  paddock.Cmd
		opts paddock.ExecOpts
		want error // nil: started
	}{
		"no limit":             {sh, paddock.ExecOpts{}, nil},
		"a limit":              {sh, paddock.ExecOpts{Timeout: paddock.Duration(time.Second)}, nil},
		"a zero timeout":       {sh, paddock.ExecOpts{Timeout: paddock.Duration(0)}, paddock.ErrExecTimeout},
		"a negative timeout":   {sh, paddock.ExecOpts{Timeout: paddock.Duration(-1)}, paddock.ErrInvalid},
		"a bad command first":  {paddock.Cmd{}, paddock.ExecOpts{Timeout: paddock.Duration(0)}, paddock.ErrInvalid},
		"a NUL in an argument": {paddock.NewCmd("sh", "a\x00b"), paddock.ExecOpts{}, paddock.ErrInvalid},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dl, _, err := paddock.StartExec(context.Background(), tc.cmd, tc.opts, paddock.ExecLimits{}, nil)
			if tc.want == nil {
				require.NoError(t, err)
				assert.Equal(t, tc.opts.Timeout != nil, dl.Finite())
				return
			}
			require.ErrorIs(t, err, tc.want)
		})
	}
}
