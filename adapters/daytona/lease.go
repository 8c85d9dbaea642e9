package daytona

import (
	"context"
	"net/http"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/reaping"
)

// claim records lease on sb, keeping its other labels (Daytona replaces
// the whole set). A sandbox gone meanwhile is not an error.
func (a *Adapter) claim(ctx context.Context, sb *sandbox, lease paddock.Lease) error {
	labels := reaping.Labels(sb.Labels, lease, 0)
	labels[labelMarker] = "1"
	return a.rest.Unless(ctx, a.client, http.MethodPut, sandboxPath(sb.ID)+"/labels", nil, map[string]any{"labels": labels})
}

// RenewLeases records lease on each named sandbox of ours: one walk of the
// listing, then a label update per sandbox, reaping.RenewWidth at a time.
func (a *Adapter) RenewLeases(ctx context.Context, names []string, lease paddock.Lease) error {
	return reaping.Renew(ctx, a.eachSandbox, func(sb sandbox) string { return sb.Name }, names, reaping.RenewWidth,
		func(ctx context.Context, sb sandbox) error { return a.claim(ctx, &sb, lease) })
}

// SandboxFacts reads what a reap judges our sandboxes by: their labels.
// Daytona stops an idle sandbox itself (its auto-stop interval), so a reap
// stops none.
func (a *Adapter) SandboxFacts(ctx context.Context) ([]paddock.SandboxFacts, error) {
	var facts []paddock.SandboxFacts
	err := a.eachSandbox(ctx, func(sb sandbox) {
		lease, maxAge := reaping.FromLabels(sb.Labels)
		facts = append(facts, paddock.SandboxFacts{Name: sb.Name, Created: reaping.ParseTime(sb.CreatedAt), MaxAge: maxAge, Lease: lease})
	})
	return facts, err
}

// Reclaim destroys a sandbox a reap judged (docs/contract.md#leases).
func (a *Adapter) Reclaim(ctx context.Context, f paddock.SandboxFacts) error {
	return a.Destroy(ctx, a.BuildHandle(f.Name))
}
