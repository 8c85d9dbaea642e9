package docker

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock"
)

// stampEvery throttles activity stamps: at most one per sandbox per
// second (idle bounds are far longer).
const stampEvery = time.Second

// rootUser runs the stamp: the only root exec the adapter makes, never
// with caller input.
const rootUser = "0:0"

// stamper remembers when each sandbox was last stamped.
type stamper struct {
	mu     sync.Mutex
	last   map[string]time.Time
	closed bool
}

// due reports whether name should be stamped now, and records it.
func (s *stamper) due(name string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || now.Sub(s.last[name]) < stampEvery {
		return false
	}
	if s.last == nil {
		s.last = map[string]time.Time{}
	}
	s.last[name] = now
	return true
}

// mark records a stamp taken at now by other means (the creation time
// stands for one).
func (s *stamper) mark(name string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[string]time.Time{}
	}
	s.last[name] = now
}

// touch records activity on h, in the background: the host's clock into
// a root-owned file the sandbox can read but not write, so neither a
// guest nor its clock can move its idle deadline. Failures are only
// logged (the idle bound is hygiene; the maximum age is the guarantee).
func (a *Adapter) touch(h paddock.Handle) {
	if !a.stamps.due(h.Name, time.Now()) {
		return
	}
	a.bg.Add(1)
	go func() {
		defer a.bg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		now := strconv.FormatInt(time.Now().UnixNano(), 10)
		if _, err := a.run(ctx, h.Name, execSpec{cmd: sh(scriptStamp, now), user: rootUser}, nil); err != nil {
			a.log.Debug().Str("sandbox", h.Name).Str("error", err.Error()).Msg("docker: activity stamp")
		}
	}()
}

// sandboxState reads a running sandbox's activity stamp and owner
// override (zero and "" when absent).
func (a *Adapter) sandboxState(ctx context.Context, name string) (time.Time, string) {
	out, err := a.run(ctx, name, execSpec{cmd: sh(scriptState)}, nil)
	if err != nil || out.code != 0 {
		return time.Time{}, ""
	}
	lines := strings.SplitN(string(out.stdout), "\n", 3)
	var stamp time.Time
	if n, err := strconv.ParseInt(strings.TrimSpace(lines[0]), 10, 64); err == nil && n > 0 {
		stamp = time.Unix(0, n)
	}
	owner := ""
	if len(lines) > 1 {
		owner = strings.TrimSpace(lines[1])
	}
	return stamp, owner
}

// claim makes this runtime the owner of an adopted sandbox (labels cannot
// change, so the claim goes beside the stamp).
func (a *Adapter) claim(ctx context.Context, name string) {
	if _, err := a.run(ctx, name, execSpec{cmd: sh(scriptClaim, a.owner), user: rootUser}, nil); err != nil {
		a.log.Debug().Str("sandbox", name).Str("error", err.Error()).Msg("docker: claiming a sandbox")
	}
}

// Reap enforces the lifetime bounds of every Paddock sandbox on the
// engine, from labels and the activity stamp alone: one older than its
// maximum age is destroyed; one whose owner runtime ran on this host and
// is gone is destroyed as an orphan; a running one unused for its idle
// timeout is stopped. A sandbox without a readable creation time is left
// alone.
func (a *Adapter) Reap(ctx context.Context) (paddock.ReapReport, error) {
	var report paddock.ReapReport
	res, err := a.engine.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: client.Filters{}.Add("label", labelManaged+"=true")})
	if err != nil {
		return report, engineError("list", err)
	}
	var errs []error
	now := time.Now()
	for _, c := range res.Items {
		name := c.Labels[labelName]
		if name == "" || !hasName(c.Names, containerName(name)) {
			continue
		}
		created, err := time.Parse(time.RFC3339Nano, c.Labels[labelCreatedAt])
		if err != nil {
			continue // never destroy on missing data
		}
		maxAge, _ := time.ParseDuration(c.Labels[labelMaxAge])
		idle, _ := time.ParseDuration(c.Labels[labelIdleTimeout])
		remove := func() error {
			_, err := a.engine.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
			if err != nil && !cerrdefs.IsNotFound(err) {
				return engineError("remove "+name, err)
			}
			return nil
		}
		if maxAge > 0 && now.Sub(created) > maxAge {
			if err := remove(); err != nil {
				errs = append(errs, err)
				continue
			}
			report.Destroyed = append(report.Destroyed, name)
			continue
		}
		since, owner := created, c.Labels[labelOwner]
		if c.State == container.StateRunning {
			stamp, claimed := a.sandboxState(ctx, name)
			if stamp.After(since) {
				since = stamp
			}
			if claimed != "" {
				owner = claimed
			}
		}
		if alive, known := ownerState(owner); known && !alive && owner != a.owner {
			if err := remove(); err != nil {
				errs = append(errs, err)
				continue
			}
			report.Orphaned = append(report.Orphaned, name)
			continue
		}
		if c.State == container.StateRunning && idle > 0 && now.Sub(since) > idle {
			zero := 0
			if _, err := a.engine.ContainerStop(ctx, c.ID, client.ContainerStopOptions{Timeout: &zero}); err != nil && !cerrdefs.IsNotFound(err) {
				errs = append(errs, engineError("stop "+name, err))
				continue
			}
			report.Stopped = append(report.Stopped, name)
		}
	}
	return report, errors.Join(errs...)
}
