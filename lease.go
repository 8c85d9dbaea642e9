package paddock

import (
	"context"
	"errors"
	"time"
)

// Lease says which runtime holds a sandbox and until when
// (docs/contract.md#leases). Its owner renews it while it holds the
// sandbox; once Until has passed, any runtime's Reap may destroy the
// sandbox as an orphan. The zero Lease is none: the sandbox is not held
// by a lease.
type Lease struct {
	// Owner is the holding runtime's identity.
	Owner string `json:"owner,omitempty"`
	// Until is when the lease lapses unless renewed.
	Until time.Time `json:"until,omitzero"`
}

// IsZero reports whether l is no lease.
func (l Lease) IsZero() bool { return l.Owner == "" && l.Until.IsZero() }

// Lapsed reports whether the lease has an end and it passed before now; a
// lease without an end (an owner alone) never lapses.
func (l Lease) Lapsed(now time.Time) bool { return !l.Until.IsZero() && now.After(l.Until) }

// SandboxFacts are what an adapter records of one Paddock sandbox: all a
// reap decides by (docs/contract.md#leases).
type SandboxFacts struct {
	Name     string
	ID       string        // the provider's id of this instance, where a reap must reclaim exactly it ("" = by name)
	Created  time.Time     // zero: unknown
	MaxAge   time.Duration // <= 0: none
	Idle     time.Duration // <= 0: none
	LastUsed time.Time     // zero: the creation time
	Running  bool          // only a running sandbox is stopped as idle
	Lease    Lease         // zero: none
	// Orphan marks a sandbox the adapter knows to be orphaned by other
	// means (its owner process is gone from this host).
	Orphan bool
}

// LeaseKeeper is implemented by adapters that record leases and lifetime
// bounds on the sandboxes they create (CreateOpts.Lease,
// CreateNewOpts.Lease): they supply the facts and the actions, and Reap and
// Leased decide, the same way for every adapter.
type LeaseKeeper interface {
	Adapter
	// SandboxFacts reads the facts of every Paddock sandbox of the
	// adapter, or ErrTruncated; never a partial list that looks whole.
	SandboxFacts(ctx context.Context) ([]SandboxFacts, error)
	// RenewLeases records lease on each named sandbox that exists and is
	// Paddock's; absent ones are skipped. One sandbox's failure does not
	// stop the others: the errors are joined.
	RenewLeases(ctx context.Context, names []string, lease Lease) error
	// Reclaim destroys the sandbox a reap judged by f (the instance f.ID
	// names, where it names one); absent is success.
	Reclaim(ctx context.Context, f SandboxFacts) error
}

// IdleStopper is implemented by lease keepers whose provider does not park
// idle sandboxes itself: a reap stops those unused for their idle timeout.
type IdleStopper interface {
	StopIdle(ctx context.Context, f SandboxFacts) error
}

// ReapOpts are the options of a reap.
type ReapOpts struct {
	// Owner is the reaping runtime's identity: sandboxes it holds are never
	// orphans, whatever their lease says. "" = none.
	Owner string
	// DryRun reports what the reap would do and changes nothing.
	DryRun bool
}

// ReapReport says what a reaper did (or, in a dry run, would do), by
// sandbox name: stopped as idle, destroyed as too old, destroyed as
// orphans whose owner is gone or whose lease lapsed.
type ReapReport struct {
	Stopped   []string `json:"stopped,omitempty"`
	Destroyed []string `json:"destroyed,omitempty"`
	Orphaned  []string `json:"orphaned,omitempty"`
	DryRun    bool     `json:"dry_run,omitempty"`
}

// ReapAction is what a reap does to one sandbox.
type ReapAction int

// The actions of Judge.
const (
	ReapNone    ReapAction = iota
	ReapStop               // running and idle too long
	ReapDestroy            // older than its maximum age
	ReapOrphan             // its lease lapsed, or its owner is gone
)

// Judge says what a reap by the runtime self does at now to the sandbox f:
// past its maximum age it is destroyed; held by a lease that lapsed (and
// not by self) it is destroyed as an orphan; running and unused for its
// idle timeout it is stopped. A sandbox whose creation time is unknown is
// never destroyed.
func Judge(f SandboxFacts, now time.Time, self string) ReapAction {
	if !f.Created.IsZero() && f.MaxAge > 0 && now.Sub(f.Created) > f.MaxAge {
		return ReapDestroy
	}
	mine := self != "" && f.Lease.Owner == self
	if !mine && !f.Created.IsZero() && (f.Orphan || f.Lease.Lapsed(now)) {
		return ReapOrphan
	}
	since := f.LastUsed
	if since.Before(f.Created) {
		since = f.Created
	}
	if f.Running && f.Idle > 0 && !since.IsZero() && now.Sub(since) > f.Idle {
		return ReapStop
	}
	return ReapNone
}

// Reap enforces the lifetime bounds and leases of every Paddock sandbox of
// k: each is judged (Judge) at the time the reading of the facts began
// (reading many sandboxes takes a while, and a lease read late must not be
// judged against a clock that ran on meanwhile), and, unless opts.DryRun,
// reclaimed or stopped; a keeper that is no IdleStopper stops none. Reap
// never touches a sandbox Paddock did not create, nor one held by a live
// lease or by opts.Owner; it is stateless and safe to run from several
// processes at once. One sandbox's failure does not stop the sweep: the
// errors are joined and returned with the report.
func Reap(ctx context.Context, k LeaseKeeper, opts ReapOpts) (ReapReport, error) {
	began := time.Now()
	all, err := k.SandboxFacts(ctx)
	report := ReapReport{DryRun: opts.DryRun}
	if err != nil {
		return report, err
	}
	stopper, _ := k.(IdleStopper)
	var errs []error
	for _, f := range all {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		action := Judge(f, began, opts.Owner)
		if action == ReapNone || (action == ReapStop && stopper == nil) {
			continue
		}
		if !opts.DryRun {
			do := k.Reclaim
			if action == ReapStop {
				do = stopper.StopIdle
			}
			if err := do(ctx, f); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		switch action {
		case ReapStop:
			report.Stopped = append(report.Stopped, f.Name)
		case ReapDestroy:
			report.Destroyed = append(report.Destroyed, f.Name)
		case ReapOrphan:
			report.Orphaned = append(report.Orphaned, f.Name)
		}
	}
	return report, errors.Join(errs...)
}

// Leased lists the names of k's sandboxes whose lease names owner, lapsed
// or not.
func Leased(ctx context.Context, k LeaseKeeper, owner string) ([]string, error) {
	all, err := k.SandboxFacts(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range all {
		if f.Lease.Owner == owner {
			names = append(names, f.Name)
		}
	}
	return names, nil
}
