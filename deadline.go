package paddock

import (
	"context"
	"time"
)

// ExecDeadline is Exec's one monotonic deadline (docs/contract.md#exec-deadlines). It is
// fixed when Exec starts; output never extends it; every check computes the
// remaining budget afresh; and its error always reports the original
// timeout. It bounds local collection, not remote execution.
type ExecDeadline struct {
	timeout *time.Duration
	at      time.Time
	clock   Clock
}

// StartExecDeadline fixes the deadline for an Exec that starts now. A nil
// timeout is infinite; clock nil is the system clock.
func StartExecDeadline(timeout *time.Duration, clock Clock) ExecDeadline {
	clock = ClockOrSystem(clock)
	d := ExecDeadline{timeout: timeout, clock: clock}
	if timeout != nil {
		d.at = clock.Now().Add(*timeout)
	}
	return d
}

// Finite reports whether there is a deadline at all.
func (d ExecDeadline) Finite() bool { return d.timeout != nil }

// Remaining returns max(deadline - now, 0); for an infinite deadline it
// returns -1.
func (d ExecDeadline) Remaining() time.Duration {
	if d.timeout == nil {
		return -1
	}
	if r := d.at.Sub(d.clock.Now()); r > 0 {
		return r
	}
	return 0
}

// Expired reports whether the remaining budget is zero. Callers check it
// before dispatch, after any lookup, before every wait for a frame (even when
// frames are already queued) and after the exit arrives.
func (d ExecDeadline) Expired() bool { return d.Remaining() == 0 }

// Err returns the timeout error, an *ExecTimeoutError carrying the original
// timeout.
func (d ExecDeadline) Err() error {
	var t time.Duration
	if d.timeout != nil {
		t = *d.timeout
	}
	return &ExecTimeoutError{Timeout: t}
}

// C returns a channel that fires when the remaining budget runs out, or nil
// (which blocks forever in a select) when the deadline is infinite. Call it
// afresh before each wait.
func (d ExecDeadline) C() <-chan time.Time {
	if d.timeout == nil {
		return nil
	}
	return d.clock.After(d.Remaining())
}

// Context returns ctx bounded by the remaining budget (measured now, on
// the deadline's clock; the context itself runs on real time), or ctx
// unchanged when the deadline is infinite. Call cancel when done.
func (d ExecDeadline) Context(ctx context.Context) (context.Context, context.CancelFunc) {
	if d.timeout == nil {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d.Remaining())
}

// Clock is the time source of deadlines and backoff, injectable so tests
// never sleep. Now must carry a monotonic reading, as time.Now does.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// systemClock is the real clock, what a nil Clock means.
type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// ClockOrSystem returns c, or the system clock when c is nil.
func ClockOrSystem(c Clock) Clock {
	if c == nil {
		return systemClock{}
	}
	return c
}

// Duration returns a pointer to d, for option fields where nil means "use the
// default" and a pointer to zero is an explicit (often invalid) zero.
func Duration(d time.Duration) *time.Duration { return &d }

// boundedTimeout applies the contract's rule for a bounded timeout option:
// absent (nil) takes def; present must be a whole number of milliseconds in
// [1ms, max], else it is an *InvalidError with detail.
func boundedTimeout(d *time.Duration, def, max time.Duration, detail string) (*time.Duration, error) {
	if d == nil {
		return &def, nil
	}
	v := *d // a copy: the options returned never alias the caller's
	if v < time.Millisecond || v > max || v%time.Millisecond != 0 {
		return d, &InvalidError{Detail: detail}
	}
	return &v, nil
}

// Settle is ctx, ended grace after ctx ends rather than at once: the time
// an operation the caller gave up on has to finish cleanly (a write
// reports whether it landed, an upload ends where it is instead of being
// cut). stop must be called.
func Settle(ctx context.Context, grace time.Duration) (wait context.Context, stop func()) {
	wait, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopWatch := context.AfterFunc(ctx, func() {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-wait.Done(): // stopped first
		}
	})
	return wait, func() { stopWatch(); cancel() }
}
