package daytona

import (
	"context"
	"net/http"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/reaping"
)

// Labels of a sandbox's lease (docs/contract.md#leases).
const (
	labelOwner      = "paddock.owner"       // the holding runtime's identity
	labelLeaseUntil = "paddock.lease-until" // RFC 3339 (nanoseconds), UTC
	labelMaxAge     = "paddock.max-age"     // Go duration
)

// renewWidth is how many sandboxes a renewal relabels at once.
const renewWidth = 8

// leaseLabels adds lease to labels (nothing for a zero lease).
func leaseLabels(labels map[string]string, lease paddock.Lease) {
	if lease.IsZero() {
		return
	}
	labels[labelOwner] = lease.Owner
	labels[labelLeaseUntil] = reaping.FormatTime(lease.Until)
}

// leaseOf reads a sandbox's lease from its labels.
func leaseOf(sb sandbox) paddock.Lease {
	if sb.Labels[labelOwner] == "" {
		return paddock.Lease{}
	}
	return paddock.Lease{Owner: sb.Labels[labelOwner], Until: reaping.ParseTime(sb.Labels[labelLeaseUntil])}
}

// claim records lease on sb, keeping its other labels (Daytona replaces
// the whole set). A sandbox gone meanwhile is not an error.
func (a *Adapter) claim(ctx context.Context, sb *sandbox, lease paddock.Lease) error {
	labels := make(map[string]string, len(sb.Labels)+2)
	for k, v := range sb.Labels {
		labels[k] = v
	}
	labels[labelMarker] = "1"
	leaseLabels(labels, lease)
	status, header, data, err := a.rest.Call(ctx, a.client, http.MethodPut, sandboxPath(sb.ID)+"/labels", nil, map[string]any{"labels": labels})
	switch {
	case err != nil:
		return err
	case status == http.StatusNotFound:
		return nil
	case status < 200 || status > 299:
		return a.rest.StatusError(status, header, data)
	}
	return nil
}

// RenewLeases records lease on each named sandbox of ours: one walk of the
// listing, then a label update per sandbox, renewWidth at a time.
func (a *Adapter) RenewLeases(ctx context.Context, names []string, lease paddock.Lease) error {
	byName := map[string]sandbox{}
	if err := a.eachSandbox(ctx, func(sb sandbox) { byName[sb.Name] = sb }); err != nil {
		return err
	}
	var held []string
	for _, n := range names {
		if _, ok := byName[n]; ok {
			held = append(held, n)
		}
	}
	return reaping.Each(ctx, len(held), renewWidth, func(ctx context.Context, i int) error {
		sb := byName[held[i]]
		return a.claim(ctx, &sb, lease)
	})
}

// Leased lists our sandboxes whose lease names owner.
func (a *Adapter) Leased(ctx context.Context, owner string) ([]string, error) {
	var names []string
	err := a.eachSandbox(ctx, func(sb sandbox) {
		if leaseOf(sb).Owner == owner {
			names = append(names, sb.Name)
		}
	})
	if err != nil {
		return nil, err
	}
	return names, nil
}

// Reap destroys our sandboxes older than their maximum age, and, as
// orphans, those whose lease lapsed and is not opts.Owner's. Daytona stops an idle sandbox itself (its auto-stop
// interval), so Reap stops none.
func (a *Adapter) Reap(ctx context.Context, opts paddock.ReapOpts) (paddock.ReapReport, error) {
	var facts []reaping.Facts
	err := a.eachSandbox(ctx, func(sb sandbox) {
		facts = append(facts, reaping.Facts{Name: sb.Name, Created: reaping.ParseTime(sb.CreatedAt),
			MaxAge: reaping.ParseDuration(sb.Labels[labelMaxAge]), Lease: leaseOf(sb)})
	})
	if err != nil {
		return paddock.ReapReport{DryRun: opts.DryRun}, err
	}
	destroy := func(ctx context.Context, name string) error { return a.Destroy(ctx, a.BuildHandle(name)) }
	stop := func(context.Context, string) error { return nil } // never decided: no idle timeout here
	return reaping.Sweep(ctx, opts, time.Now(), facts, destroy, stop)
}
