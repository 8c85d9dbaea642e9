// Package reaping decides what a reap does to each Paddock sandbox and
// carries it out, so every adapter's Reap enforces the same rules
// (docs/contract.md#leases): past its maximum age a sandbox is destroyed;
// held by a lease that lapsed (and not by the reaping runtime) it is
// destroyed as an orphan; running and unused for its idle timeout it is
// stopped. A sandbox whose creation time is unknown is only stopped, never
// destroyed.
package reaping

import (
	"context"
	"errors"
	"time"

	"github.com/paddockhq/paddock"
)

// Facts are what an adapter knows of one Paddock sandbox.
type Facts struct {
	Name     string
	Created  time.Time     // zero: unknown
	MaxAge   time.Duration // <= 0: none
	Idle     time.Duration // <= 0: none
	LastUsed time.Time     // zero: the creation time
	Running  bool          // only a running sandbox is stopped as idle
	Lease    paddock.Lease // zero: none
	// Orphan marks a sandbox the adapter knows to be orphaned by other
	// means (its owner process is gone from this host).
	Orphan bool
}

// Action is what a reap does to one sandbox.
type Action int

// Actions of Decide.
const (
	None    Action = iota
	Stop           // running and idle too long
	Destroy        // older than its maximum age
	Orphan         // its lease lapsed, or its owner is gone
)

// Decide says what a reap by the runtime self does to the sandbox f at now.
func Decide(f Facts, now time.Time, self string) Action {
	if !f.Created.IsZero() && f.MaxAge > 0 && now.Sub(f.Created) > f.MaxAge {
		return Destroy
	}
	mine := self != "" && f.Lease.Owner == self
	if !mine && !f.Created.IsZero() && (f.Orphan || f.Lease.Lapsed(now)) {
		return Orphan
	}
	since := f.LastUsed
	if since.Before(f.Created) {
		since = f.Created
	}
	if f.Running && f.Idle > 0 && !since.IsZero() && now.Sub(since) > f.Idle {
		return Stop
	}
	return None
}

// Sweep decides each sandbox's action and, unless opts.DryRun, carries it
// out with destroy or stop; the report lists what was done (or would be).
// A nil stop is an adapter whose provider parks idle sandboxes itself (it
// records no idle timeout): nothing is stopped. One sandbox's failure
// does not stop the sweep: the errors are joined.
func Sweep(ctx context.Context, opts paddock.ReapOpts, now time.Time, all []Facts,
	destroy, stop func(ctx context.Context, name string) error) (paddock.ReapReport, error) {
	report := paddock.ReapReport{DryRun: opts.DryRun}
	var errs []error
	for _, f := range all {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		action := Decide(f, now, opts.Owner)
		if action == None || (action == Stop && stop == nil) {
			continue
		}
		if !opts.DryRun {
			do := destroy
			if action == Stop {
				do = stop
			}
			if err := do(ctx, f.Name); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		switch action {
		case Stop:
			report.Stopped = append(report.Stopped, f.Name)
		case Destroy:
			report.Destroyed = append(report.Destroyed, f.Name)
		case Orphan:
			report.Orphaned = append(report.Orphaned, f.Name)
		}
	}
	return report, errors.Join(errs...)
}

// Owned is the names of the sandboxes whose lease names owner.
func Owned(all []Facts, owner string) []string {
	var names []string
	for _, f := range all {
		if f.Lease.Owner == owner {
			names = append(names, f.Name)
		}
	}
	return names
}

// Renew calls claim on each listed sandbox whose name is in names, at
// most width at a time: a renewal over one walk of an adapter's listing.
// Names not listed are skipped (gone meanwhile).
func Renew[T any](ctx context.Context, listed []T, name func(T) string, names []string, width int, claim func(context.Context, T) error) error {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	var held []T
	for _, l := range listed {
		if want[name(l)] {
			held = append(held, l)
		}
	}
	return Each(ctx, len(held), width, func(ctx context.Context, i int) error { return claim(ctx, held[i]) })
}

// FormatTime writes a recorded time: RFC 3339 with nanoseconds, UTC.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ParseTime reads a recorded time; zero when absent or malformed.
func ParseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// ParseDuration reads a recorded duration; zero when absent or malformed.
func ParseDuration(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0
	}
	return d
}

// Each calls fn on each index of n items, at most width at a time, and
// joins the errors; once ctx ends it starts no more.
func Each(ctx context.Context, n, width int, fn func(ctx context.Context, i int) error) error {
	if width < 1 {
		width = 1
	}
	sem := make(chan struct{}, width)
	errc := make(chan error, n)
	for i := range n {
		acquired := false
		select {
		case sem <- struct{}{}:
			acquired = true
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			if acquired {
				<-sem
			}
			errc <- ctx.Err()
			break
		}
		go func() {
			defer func() { <-sem }()
			errc <- fn(ctx, i)
		}()
	}
	for range cap(sem) {
		sem <- struct{}{}
	}
	close(errc)
	var errs []error
	for err := range errc {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Keeper is an adapter's Leased and Reap, built from what the adapter
// knows of its sandboxes and how it destroys and stops one.
type Keeper struct {
	// Facts reads every Paddock sandbox of the adapter.
	Facts func(ctx context.Context) ([]Facts, error)
	// Destroy removes a sandbox; absent is success.
	Destroy func(ctx context.Context, name string) error
	// Stop parks a sandbox; nil when the provider parks idle ones itself.
	Stop func(ctx context.Context, name string) error
}

// Leased lists the sandboxes whose lease names owner.
func (k Keeper) Leased(ctx context.Context, owner string) ([]string, error) {
	all, err := k.Facts(ctx)
	if err != nil {
		return nil, err
	}
	return Owned(all, owner), nil
}

// Reap sweeps every sandbox (see Sweep), judged at the time the reading
// of their facts began: reading many sandboxes takes a while, and a lease
// read late must not be judged against a clock that ran on meanwhile (a
// live owner's lease, renewed every third of it, would seem lapsed).
func (k Keeper) Reap(ctx context.Context, opts paddock.ReapOpts) (paddock.ReapReport, error) {
	began := time.Now()
	all, err := k.Facts(ctx)
	if err != nil {
		return paddock.ReapReport{DryRun: opts.DryRun}, err
	}
	return Sweep(ctx, opts, began, all, k.Destroy, k.Stop)
}
