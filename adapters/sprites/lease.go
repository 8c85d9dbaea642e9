package sprites

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/reaping"
)

// Sprites labels are plain strings: each of the lease's carries its value
// after the key and "=".

// createLabels are the labels of a sprite created with lease.
func (a *Adapter) createLabels(lease paddock.Lease) []string {
	return withLease(nil, lease, a.cfg.MaxAge)
}

// withLease is labels with its lease labels replaced by lease's (and a
// maximum age, when set).
func withLease(labels []string, lease paddock.Lease, maxAge time.Duration) []string {
	var out []string
	kept := map[string]string{}
	for _, l := range labels {
		if k, v, ok := strings.Cut(l, "="); ok && strings.HasPrefix(k, "paddock.") {
			kept[k] = v
		} else {
			out = append(out, l)
		}
	}
	recorded := reaping.Labels(kept, lease, maxAge)
	for _, k := range slices.Sorted(maps.Keys(recorded)) {
		out = append(out, k+"="+recorded[k])
	}
	return out
}

// leaseOf reads a sprite's lease and maximum age from its labels.
func leaseOf(s spriteObject) (paddock.Lease, time.Duration) {
	recorded := map[string]string{}
	for _, l := range s.Labels {
		if k, v, ok := strings.Cut(l, "="); ok {
			recorded[k] = v
		}
	}
	return reaping.FromLabels(recorded)
}

// claim records lease on s, keeping its other labels (an update replaces
// the whole list). A sprite gone meanwhile is not an error.
func (a *Adapter) claim(ctx context.Context, s spriteObject, lease paddock.Lease) error {
	return a.rest.Unless(ctx, a.client, http.MethodPut, spritePath(s.Name), nil, map[string]any{"labels": withLease(s.Labels, lease, 0)})
}

// RenewLeases records lease on each named sprite: one walk of the listing,
// then an update per sprite, reaping.RenewWidth at a time.
func (a *Adapter) RenewLeases(ctx context.Context, names []string, lease paddock.Lease) error {
	return reaping.Renew(ctx, a.eachSprite, func(s spriteObject) string { return s.Name }, names, reaping.RenewWidth,
		func(ctx context.Context, s spriteObject) error { return a.claim(ctx, s, lease) })
}

// SandboxFacts reads what a reap judges every sprite by: its labels. A
// sprite without a lease is never touched; Sprites parks idle sprites
// itself, so a reap stops none.
func (a *Adapter) SandboxFacts(ctx context.Context) ([]paddock.SandboxFacts, error) {
	var facts []paddock.SandboxFacts
	err := a.eachSprite(ctx, func(s spriteObject) {
		created, _ := time.Parse(time.RFC3339, s.CreatedAt)
		lease, maxAge := leaseOf(s)
		facts = append(facts, paddock.SandboxFacts{Name: s.Name, Created: created, Lease: lease, MaxAge: maxAge})
	})
	return facts, err
}

// Reclaim destroys a sandbox a reap judged (docs/contract.md#leases).
func (a *Adapter) Reclaim(ctx context.Context, f paddock.SandboxFacts) error {
	return a.Destroy(ctx, a.BuildHandle(f.Name))
}
