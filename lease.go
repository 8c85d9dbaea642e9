package paddock

import (
	"context"
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

// Leaser is implemented by adapters that record leases on the sandboxes
// they create (CreateOpts.Lease, CreateNewOpts.Lease) and can renew them.
type Leaser interface {
	// RenewLeases records lease on each named sandbox that exists and is
	// Paddock's; absent ones are skipped. One sandbox's failure does not
	// stop the others: the errors are joined.
	RenewLeases(ctx context.Context, names []string, lease Lease) error
	// Leased lists the names of the sandboxes whose lease names owner,
	// lapsed or not, or ErrTruncated; never a partial list that looks
	// whole.
	Leased(ctx context.Context, owner string) ([]string, error)
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

// Reaper is implemented by adapters whose sandboxes carry lifetime bounds
// (idle timeout, maximum age) or leases that someone must enforce. Reap
// never touches a sandbox Paddock did not create, nor one held by a live
// lease or by opts.Owner. It is stateless and safe to run from several
// processes at once; the runtime runs it on a schedule, and callers may
// run it themselves. An error for one sandbox does not stop the sweep:
// the errors are joined and returned with the report.
type Reaper interface {
	Reap(ctx context.Context, opts ReapOpts) (ReapReport, error)
}
