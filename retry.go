package paddock

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rs/zerolog"
)

// Defaults of BackoffOpts.
const (
	DefaultBackoffAttempts = 3
	DefaultBackoffBase     = 250 * time.Millisecond
	DefaultBackoffMax      = 2000 * time.Millisecond
	DefaultBackoffLabel    = "external call"
)

// BackoffOpts configure WithBackoff. The zero value takes every default.
type BackoffOpts struct {
	Attempts  int                 // total calls, not retries: 0 = 3; negative is invalid
	Base      time.Duration       // first delay ceiling: 0 = 250ms; else a whole number of ms ≥ 1ms
	Max       time.Duration       // delay cap: 0 = 2000ms; else a whole number of ms ≥ 1ms
	Label     string              // names the call in log lines: "" = "external call"
	Retriable func(error) bool    // nil = IsTransient
	Logger    zerolog.Logger      // each retry logs a warning; the zero Logger is silent
	Clock     Clock               // nil = the system clock
	Rand      func(n int64) int64 // uniform in [0, n); nil = math/rand/v2
}

// resolve fills defaults and validates; a bad value is an *InvalidError with
// detail backoff_options.
func (o BackoffOpts) resolve() (BackoffOpts, error) {
	o.Attempts = cmp.Or(o.Attempts, DefaultBackoffAttempts)
	o.Base = cmp.Or(o.Base, DefaultBackoffBase)
	o.Max = cmp.Or(o.Max, DefaultBackoffMax)
	bad := o.Attempts < 0 ||
		o.Base < time.Millisecond || o.Base%time.Millisecond != 0 ||
		o.Max < time.Millisecond || o.Max%time.Millisecond != 0
	if bad {
		return o, &InvalidError{Detail: DetailBackoffOptions}
	}
	o.Label = cmp.Or(o.Label, DefaultBackoffLabel)
	if o.Retriable == nil {
		o.Retriable = IsTransient
	}
	o.Clock = ClockOrSystem(o.Clock)
	if o.Rand == nil {
		o.Rand = rand.Int64N
	}
	return o, nil
}

// WithBackoff calls fn until it succeeds, up to opts.Attempts calls in all
// (docs/contract.md#retry). Use it only for idempotent calls: never for a
// spawn, CreateNew, DestroyOnce, TerminateSession or CreateCheckpointOnce.
//
// An error is retried while attempts remain and opts.Retriable says so; any
// other error, or the last one, is returned unchanged. A panic is retried
// while attempts remain whatever the classifier says; on the last attempt fn
// runs unguarded, so its panic propagates with its own stack. Before attempt
// n+1 it waits a delay in [ceiling/2, ceiling] with ceiling = min(Base·2^(n-1),
// Max); the rate_limited RetryAfter hint is not used. If ctx ends, the wait
// stops at once and the error wraps both ctx.Err() and the last error.
func WithBackoff(ctx context.Context, fn func(context.Context) error, opts BackoffOpts) error {
	opts, err := opts.resolve()
	if err != nil {
		return err
	}
	var last error
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return interrupted(err, last)
		}
		if n == opts.Attempts {
			return fn(ctx) // unguarded: a panic here is the caller's
		}
		var reason any
		last, reason = guardedCall(ctx, fn)
		switch {
		case reason == nil && last == nil:
			return nil
		case reason == nil && !opts.Retriable(last):
			return last
		case reason != nil:
			last = fmt.Errorf("%s panicked: %v", opts.Label, reason)
		}
		delay := backoffDelay(n, opts.Base, opts.Max, opts.Rand)
		opts.Logger.Warn().Str("label", opts.Label).Int("attempt", n).
			Str("reason", last.Error()).Dur("delay", delay).Msg("retrying")
		select {
		case <-ctx.Done():
			return interrupted(ctx.Err(), last)
		case <-opts.Clock.After(delay):
		}
	}
}

// guardedCall runs fn and turns a panic into its recovered value.
func guardedCall(ctx context.Context, fn func(context.Context) error) (err error, panicked any) {
	defer func() {
		if v := recover(); v != nil {
			panicked = v
		}
	}()
	return fn(ctx), nil
}

// interrupted wraps a context error with the last attempt's error, if any.
func interrupted(ctxErr, last error) error {
	if last == nil {
		return ctxErr
	}
	return fmt.Errorf("retry interrupted: %w (last error: %w)", ctxErr, last)
}

// backoffDelay is the wait before attempt n+1: with ceiling =
// min(base·2^(n-1), max) in whole milliseconds, max(uniform(1..ceiling),
// floor(ceiling/2)).
func backoffDelay(n int, base, max time.Duration, rnd func(int64) int64) time.Duration {
	baseMS, maxMS := base.Milliseconds(), max.Milliseconds()
	ceiling := maxMS
	if n-1 < 62 && baseMS <= maxMS>>(n-1) {
		ceiling = baseMS << (n - 1)
	}
	delay := 1 + rnd(ceiling)
	if half := ceiling / 2; delay < half {
		delay = half
	}
	return time.Duration(delay) * time.Millisecond
}
