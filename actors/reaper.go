package actors

import (
	"context"
	"errors"
	"time"

	"github.com/paddockhq/paddock"
)

// DefaultReapInterval is how often the runtime runs its adapters' reapers.
const DefaultReapInterval = time.Minute

// reapTimeout bounds one scheduled sweep of one adapter.
const reapTimeout = 5 * time.Minute

// startReapers runs, every interval until shutdown, the Reap of each
// adapter that has one; reports and errors are logged.
func (rt *Runtime) startReapers(interval time.Duration) {
	for _, p := range rt.cfg.Adapters.Providers() {
		a, _ := rt.cfg.Adapters.Lookup(p)
		reaper, ok := a.(paddock.LeaseKeeper)
		if !ok {
			continue
		}
		rt.wg.Add(1)
		go func() {
			defer rt.wg.Done()
			t := time.NewTicker(interval)
			defer t.Stop()
			for {
				select {
				case <-rt.opsCtx.Done():
					return
				case <-t.C:
				}
				ctx, cancel := context.WithTimeout(rt.opsCtx, reapTimeout)
				report, err := rt.reapOne(ctx, p, reaper, paddock.ReapOpts{Owner: rt.cfg.Identity})
				cancel()
				rt.logReap(p, report, err)
			}
		}()
	}
}

func (rt *Runtime) logReap(p paddock.Provider, report paddock.ReapReport, err error) {
	rt.tel.Reaped(p, report)
	if len(report.Stopped)+len(report.Destroyed)+len(report.Orphaned) > 0 {
		rt.log.Info().Str("provider", string(p)).Strs("stopped", report.Stopped).Strs("destroyed", report.Destroyed).
			Strs("orphaned", report.Orphaned).Msg("reaped sandboxes")
	}
	if err != nil && rt.opsCtx.Err() == nil {
		rt.log.Warn().Str("provider", string(p)).Str("error", err.Error()).Msg("reaping sandboxes")
	}
}

// Reap runs every adapter's reaper now, as this runtime (opts.Owner is its
// identity: what it holds is never an orphan), and returns their reports
// by provider, and their errors joined. A dry run changes nothing.
func (rt *Runtime) Reap(ctx context.Context, opts paddock.ReapOpts) (map[paddock.Provider]paddock.ReapReport, error) {
	opts.Owner = rt.cfg.Identity
	reports := map[paddock.Provider]paddock.ReapReport{}
	var errs []error
	for _, p := range rt.cfg.Adapters.Providers() {
		a, _ := rt.cfg.Adapters.Lookup(p)
		if reaper, ok := a.(paddock.LeaseKeeper); ok {
			report, err := rt.reapOne(ctx, p, reaper, opts)
			if !opts.DryRun {
				rt.logReap(p, report, nil) // counts and logs what was done
			}
			reports[p] = report
			if err != nil {
				errs = append(errs, &paddock.OpError{Op: "reap", Provider: p, Err: err})
			}
		}
	}
	return reports, errors.Join(errs...)
}

// reapOne runs provider p's reaper as one of the runtime's own calls.
func (rt *Runtime) reapOne(ctx context.Context, p paddock.Provider, k paddock.LeaseKeeper, opts paddock.ReapOpts) (report paddock.ReapReport, err error) {
	err = rt.ownCall(ctx, p, func(ctx context.Context) (err error) { report, err = paddock.Reap(ctx, k, opts); return err })
	return report, err
}
