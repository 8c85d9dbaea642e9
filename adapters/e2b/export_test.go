package e2b

import (
	"context"

	"github.com/paddockhq/paddock"
)

// Extend is the heartbeat: the sandbox's TTL set to the configured one
// from now.
func (a *Adapter) Extend(ctx context.Context, h paddock.Handle) error {
	l, err := a.mustFind(ctx, h)
	if err != nil {
		return err
	}
	return a.extend(ctx, l.SandboxID)
}
