package sprites

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/reaping"
)

// Label prefixes of a sprite's lease (docs/contract.md#leases): Sprites
// labels are plain strings, so each carries its value after the prefix.
const (
	labelOwner      = "paddock.owner="       // the holding runtime's identity
	labelLeaseUntil = "paddock.lease-until=" // RFC 3339 (nanoseconds), UTC
	labelMaxAge     = "paddock.max-age="     // Go duration
)

// renewWidth is how many sprites a renewal relabels at once.
const renewWidth = 8

// createLabels are the labels of a sprite created with lease.
func (a *Adapter) createLabels(lease paddock.Lease) []string {
	labels := withLease(nil, lease)
	if a.cfg.MaxAge > 0 {
		labels = append(labels, labelMaxAge+a.cfg.MaxAge.String())
	}
	return labels
}

// withLease is labels with its lease labels replaced by lease's.
func withLease(labels []string, lease paddock.Lease) []string {
	out := make([]string, 0, len(labels)+2)
	for _, l := range labels {
		if !strings.HasPrefix(l, labelOwner) && !strings.HasPrefix(l, labelLeaseUntil) {
			out = append(out, l)
		}
	}
	return append(out, labelOwner+lease.Owner, labelLeaseUntil+reaping.FormatTime(lease.Until))
}

// leaseOf reads a sprite's lease from its labels; zero when it has none.
func leaseOf(s spriteObject) paddock.Lease {
	var l paddock.Lease
	for _, label := range s.Labels {
		if v, ok := strings.CutPrefix(label, labelOwner); ok {
			l.Owner = v
		} else if v, ok := strings.CutPrefix(label, labelLeaseUntil); ok {
			l.Until = reaping.ParseTime(v)
		}
	}
	if l.Owner == "" {
		return paddock.Lease{}
	}
	return l
}

// claim records lease on s, keeping its other labels (an update replaces
// the whole list). A sprite gone meanwhile is not an error.
func (a *Adapter) claim(ctx context.Context, s spriteObject, lease paddock.Lease) error {
	status, header, data, err := a.rest.Call(ctx, a.client, http.MethodPut, spritePath(s.Name), nil, map[string]any{"labels": withLease(s.Labels, lease)})
	switch {
	case err != nil:
		return err
	case status == http.StatusNotFound:
		return nil
	case status < 200 || status > 299:
		return statusError(status, header, data)
	}
	return nil
}

// RenewLeases records lease on each named sprite: one walk of the listing,
// then an update per sprite, renewWidth at a time.
func (a *Adapter) RenewLeases(ctx context.Context, names []string, lease paddock.Lease) error {
	var all []spriteObject
	if err := a.eachSprite(ctx, func(s spriteObject) { all = append(all, s) }); err != nil {
		return err
	}
	return reaping.Renew(ctx, all, func(s spriteObject) string { return s.Name }, names, renewWidth,
		func(ctx context.Context, s spriteObject) error { return a.claim(ctx, s, lease) })
}

// SandboxFacts reads what a reap judges every sprite by: its labels. A
// sprite without a lease is never touched; Sprites parks idle sprites
// itself, so a reap stops none.
func (a *Adapter) SandboxFacts(ctx context.Context) ([]paddock.SandboxFacts, error) {
	var facts []paddock.SandboxFacts
	err := a.eachSprite(ctx, func(s spriteObject) {
		created, _ := time.Parse(time.RFC3339, s.CreatedAt)
		f := paddock.SandboxFacts{Name: s.Name, Created: created, Lease: leaseOf(s)}
		for _, label := range s.Labels {
			if v, ok := strings.CutPrefix(label, labelMaxAge); ok {
				f.MaxAge = reaping.ParseDuration(v)
			}
		}
		facts = append(facts, f)
	})
	return facts, err
}

// Reclaim destroys a sandbox a reap judged (docs/contract.md#leases).
func (a *Adapter) Reclaim(ctx context.Context, f paddock.SandboxFacts) error {
	return a.Destroy(ctx, a.BuildHandle(f.Name))
}
