package actors

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/paddockhq/paddock"
)

// DefaultLease is how long a sandbox stays held after its runtime's last
// renewal (docs/contract.md#leases).
const DefaultLease = 2 * time.Minute

// renewBatch is the most sandboxes one RenewLeases call carries (an
// adapter may walk its provider's listing once per call).
const renewBatch = 250

// leases is the set of sandboxes the runtime holds, by provider: created,
// adopted or resumed through it and not destroyed.
type leases struct {
	mu   sync.Mutex
	held map[paddock.Provider]map[string]struct{}
}

func (l *leases) hold(p paddock.Provider, names ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil {
		l.held = map[paddock.Provider]map[string]struct{}{}
	}
	if l.held[p] == nil {
		l.held[p] = map[string]struct{}{}
	}
	for _, n := range names {
		l.held[p][n] = struct{}{}
	}
}

func (l *leases) release(p paddock.Provider, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.held[p], name)
}

// names is p's held sandboxes, sorted.
func (l *leases) names(p paddock.Provider) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.held[p]))
	for n := range l.held[p] {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Identity is the name this runtime records as the owner of the sandboxes
// it holds.
func (rt *Runtime) Identity() string { return rt.cfg.Identity }

// Held lists the sandboxes of provider p this runtime holds and renews the
// leases of (created, resumed or adopted through it, not destroyed),
// sorted.
func (rt *Runtime) Held(p paddock.Provider) []string { return rt.leases.names(p) }

// lease is the lease the runtime records now, zero when leases are off.
// Leases are on the system clock, never Config.Clock: other processes read
// them against theirs.
func (rt *Runtime) lease() paddock.Lease {
	if rt.cfg.Lease < 0 {
		return paddock.Lease{}
	}
	return paddock.Lease{Owner: rt.cfg.Identity, Until: time.Now().Add(rt.cfg.Lease)}
}

// startLeases runs, for each adapter that keeps leases, a goroutine that
// adopts the sandboxes leased to this runtime's identity (a previous
// runtime of the same identity may have crashed holding them; a failed
// adoption is tried again each round) and renews every held sandbox's
// lease every third of the lease, in batches, each call bounded by half a
// lease, until shutdown. Providers do not wait for each other.
func (rt *Runtime) startLeases() {
	var leasers []paddock.Provider
	for _, p := range rt.cfg.Adapters.Providers() {
		if a, _ := rt.cfg.Adapters.Lookup(p); a != nil {
			if _, ok := a.(paddock.LeaseKeeper); ok {
				leasers = append(leasers, p)
			}
		}
	}
	if len(leasers) == 0 || rt.cfg.Lease < 0 {
		return
	}
	// A call may take half a lease (a loaded provider answers slowly);
	// rounds start every third of one, or as soon as a slow round ends.
	every, callTimeout := rt.cfg.Lease/3, rt.cfg.Lease/2
	for _, p := range leasers {
		rt.goTracked("lease renewals of "+string(p), func() {
			tick := time.NewTicker(every)
			defer tick.Stop()
			adopted := false
			for {
				if !adopted {
					adopted = rt.adopt(p, callTimeout)
				}
				rt.renew(p, callTimeout)
				select {
				case <-tick.C:
				case <-rt.opsCtx.Done():
					return
				}
			}
		})
	}
}

// adopt holds the sandboxes of p leased to this runtime's identity, and
// reports whether it could list them within timeout.
func (rt *Runtime) adopt(p paddock.Provider, timeout time.Duration) bool {
	a, _ := rt.cfg.Adapters.Lookup(p)
	ctx, cancel := context.WithTimeout(rt.opsCtx, timeout)
	defer cancel()
	var names []string
	err := rt.ownCall(ctx, p, func(ctx context.Context) (err error) {
		names, err = paddock.Leased(ctx, a.(paddock.LeaseKeeper), rt.cfg.Identity)
		return err
	})
	if err != nil {
		if rt.opsCtx.Err() == nil {
			rt.log.Warn().Str("provider", string(p)).Str("error", err.Error()).Msg("adopting leased sandboxes")
		}
		return false
	}
	if len(names) > 0 {
		rt.leases.hold(p, names...)
		rt.log.Info().Str("provider", string(p)).Strs("sandboxes", names).Msg("adopted leased sandboxes")
	}
	return true
}

// renew extends the leases of p's held sandboxes, a batch at a time, each
// call bounded by timeout.
func (rt *Runtime) renew(p paddock.Provider, timeout time.Duration) {
	a, _ := rt.cfg.Adapters.Lookup(p)
	names := rt.leases.names(p)
	for len(names) > 0 && rt.opsCtx.Err() == nil {
		batch := names[:min(renewBatch, len(names))]
		names = names[len(batch):]
		ctx, cancel := context.WithTimeout(rt.opsCtx, timeout)
		err := rt.ownCall(ctx, p, func(ctx context.Context) error { return a.(paddock.LeaseKeeper).RenewLeases(ctx, batch, rt.lease()) })
		cancel()
		if err != nil && rt.opsCtx.Err() == nil {
			rt.log.Warn().Str("provider", string(p)).Int("sandboxes", len(batch)).Str("error", err.Error()).Msg("renewing leases")
		}
	}
}
