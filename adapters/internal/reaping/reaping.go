// Package reaping is what the adapters that keep leases share to record
// them (docs/contract.md#leases): renewals spread over a listing, bounded
// parallel calls, and how times and durations are written in labels. What
// a reap does is decided by paddock.Reap, once for every adapter.
package reaping

import (
	"context"
	"errors"
	"time"

	"github.com/paddockhq/paddock"
)

// Renew walks an adapter's listing once and calls claim on each sandbox
// whose name is in names, at most width at a time: a renewal as
// paddock.LeaseKeeper promises it. name answers "" for a listed sandbox
// that keeps no lease (it is skipped); a named sandbox not listed, or one
// whose claim answers not_found, went meanwhile and is skipped.
func Renew[T any](ctx context.Context, walk func(context.Context, func(T)) error, name func(T) string, names []string, width int, claim func(context.Context, T) error) error {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	var held []T
	if err := walk(ctx, func(l T) {
		if n := name(l); n != "" && want[n] {
			held = append(held, l)
		}
	}); err != nil {
		return err
	}
	return Each(ctx, len(held), width, func(ctx context.Context, i int) error {
		if err := claim(ctx, held[i]); !errors.Is(err, paddock.ErrNotFound) {
			return err
		}
		return nil
	})
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

// The labels a lease and a maximum age are recorded in, by the providers
// whose sandboxes carry labels (Daytona's as a map, Sprites' as key=value
// strings).
const (
	LabelOwner      = "paddock.owner"       // the holding runtime's identity
	LabelLeaseUntil = "paddock.lease-until" // RFC 3339 (nanoseconds), UTC
	LabelMaxAge     = "paddock.max-age"     // Go duration
)

// RenewWidth is how many sandboxes a renewal relabels, or a reap reads,
// at once.
const RenewWidth = 8

// Labels returns labels with the lease labels replaced by lease's (none
// for a zero lease) and, when maxAge is set, the maximum age.
func Labels(labels map[string]string, lease paddock.Lease, maxAge time.Duration) map[string]string {
	out := make(map[string]string, len(labels)+3)
	for k, v := range labels {
		if k != LabelOwner && k != LabelLeaseUntil {
			out[k] = v
		}
	}
	if !lease.IsZero() {
		out[LabelOwner], out[LabelLeaseUntil] = lease.Owner, FormatTime(lease.Until)
	}
	if maxAge > 0 {
		out[LabelMaxAge] = maxAge.String()
	}
	return out
}

// FromLabels reads the lease (zero without an owner) and the maximum age
// labels record.
func FromLabels(labels map[string]string) (paddock.Lease, time.Duration) {
	var lease paddock.Lease
	if labels[LabelOwner] != "" {
		lease = paddock.Lease{Owner: labels[LabelOwner], Until: ParseTime(labels[LabelLeaseUntil])}
	}
	return lease, ParseDuration(labels[LabelMaxAge])
}
