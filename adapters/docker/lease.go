package docker

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/reaping"
	"github.com/paddockhq/paddock/internal/procid"
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
		ctx, cancel := context.WithTimeout(context.Background(), engineWait)
		defer cancel()
		now := strconv.FormatInt(time.Now().UnixNano(), 10)
		if _, err := a.run(ctx, h.Name, execSpec{cmd: sh(scriptStamp, now), user: rootUser}, nil); err != nil {
			a.log.Debug().Str("sandbox", h.Name).Str("error", err.Error()).Msg("docker: activity stamp")
		}
	}()
}

// ownerOf is the owner a sandbox created or adopted with lease records.
func (a *Adapter) ownerOf(lease paddock.Lease) string {
	if lease.Owner != "" {
		return lease.Owner
	}
	return a.owner
}

// recorded is what a running sandbox's state directory says over its
// labels: the activity stamp, the owner, the lease's end (zero and ""
// when absent).
type recorded struct {
	stamp, leaseUntil time.Time
	owner             string
}

// sandboxState reads a running sandbox's recorded state; ok is false when
// it could not be read.
func (a *Adapter) sandboxState(ctx context.Context, name string) (r recorded, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, stateWait)
	defer cancel()
	out, err := a.run(ctx, name, execSpec{cmd: sh(scriptState)}, nil)
	if err != nil || out.code != 0 {
		return recorded{}, false
	}
	lines := strings.SplitN(string(out.stdout), "\n", 4)
	for len(lines) < 3 {
		lines = append(lines, "")
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(lines[0]), 10, 64); err == nil && n > 0 {
		r.stamp = time.Unix(0, n)
	}
	r.owner = strings.TrimSpace(lines[1])
	r.leaseUntil = reaping.ParseTime(strings.TrimSpace(lines[2]))
	return r, true
}

// claim records lease (or this adapter's owner, with no end) on a running
// sandbox: labels cannot change, so the claim goes beside the stamp.
func (a *Adapter) claim(ctx context.Context, name string, lease paddock.Lease) error {
	until := ""
	if !lease.Until.IsZero() {
		until = reaping.FormatTime(lease.Until)
	}
	if _, err := a.run(ctx, name, execSpec{cmd: sh(scriptClaim, a.ownerOf(lease), until), user: rootUser}, nil); err != nil {
		a.log.Debug().Str("sandbox", name).Str("error", err.Error()).Msg("docker: claiming a sandbox")
		return err
	}
	return nil
}

// RenewLeases records lease on each named running Paddock sandbox; an
// absent one is skipped. A stopped sandbox keeps no lease (its state
// directory is memory): it is held by its maximum age alone.
func (a *Adapter) RenewLeases(ctx context.Context, names []string, lease paddock.Lease) error {
	return reaping.Renew(ctx, a.eachManaged, func(c container.Summary) string {
		if c.State != container.StateRunning {
			return ""
		}
		return c.Labels[labelName]
	}, names, reaping.RenewWidth, func(ctx context.Context, c container.Summary) error {
		return a.claim(ctx, c.Labels[labelName], lease)
	})
}

// eachManaged calls fn on each Paddock container, running or not.
func (a *Adapter) eachManaged(ctx context.Context, fn func(container.Summary)) error {
	all, err := a.managed(ctx)
	for _, c := range all {
		fn(c)
	}
	return err
}

// managed lists the engine's Paddock sandboxes.
func (a *Adapter) managed(ctx context.Context) ([]container.Summary, error) {
	res, err := a.engine.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: client.Filters{}.Add("label", labelManaged+"=true")})
	if err != nil {
		return nil, engineError("list", err)
	}
	var out []container.Summary
	for _, c := range res.Items {
		if name := c.Labels[labelName]; name != "" && hasName(c.Names, containerName(name)) {
			out = append(out, c)
		}
	}
	return out, nil
}

// SandboxFacts reads what a reap judges every Paddock sandbox on the
// engine by: labels, and for a running one the state directory, read
// reaping.RenewWidth at a time. A sandbox whose state cannot be read this time is
// left alone; one whose owner ran on this host and is gone is an orphan;
// one this process holds never is.
func (a *Adapter) SandboxFacts(ctx context.Context) ([]paddock.SandboxFacts, error) {
	all, err := a.managed(ctx)
	if err != nil {
		return nil, err
	}
	facts := make([]paddock.SandboxFacts, len(all))
	err = reaping.Each(ctx, len(all), reaping.RenewWidth, func(ctx context.Context, i int) error {
		facts[i] = a.facts(ctx, all[i])
		return nil
	})
	return facts, err
}

// facts reads one sandbox's facts.
// stateWait bounds the read of one sandbox's recorded state in a sweep: a
// sandbox whose exec does not answer (one at its process limit, say) is
// unknown this time, and the sweep goes on with the others instead of
// waiting for it.
const stateWait = 30 * time.Second

func (a *Adapter) facts(ctx context.Context, c container.Summary) paddock.SandboxFacts {
	name := c.Labels[labelName]
	f := paddock.SandboxFacts{
		Name: name, ID: c.ID, Created: reaping.ParseTime(c.Labels[labelCreatedAt]),
		MaxAge: reaping.ParseDuration(c.Labels[labelMaxAge]), Idle: reaping.ParseDuration(c.Labels[labelIdleTimeout]),
		Running: c.State == container.StateRunning,
	}
	owner, until := c.Labels[labelOwner], reaping.ParseTime(c.Labels[labelLeaseUntil])
	if f.Running {
		r, ok := a.sandboxState(ctx, name)
		switch {
		case !ok:
			until = time.Time{} // unknown this time: never an orphan on a guess
			f.Running = false   // nor stopped as idle
		case r.owner != "":
			owner, until = r.owner, r.leaseUntil
		}
		f.LastUsed = r.stamp
	} else {
		until = time.Time{} // a stopped sandbox's renewals are gone with its memory
	}
	if owner == a.owner {
		until = time.Time{} // held by this process, which lives: never an orphan by lease
	}
	f.Lease = paddock.Lease{Owner: owner, Until: until}
	if alive, known := procid.State(owner); known && !alive && owner != a.owner {
		f.Orphan = true
	}
	return f
}

// Reclaim removes the container a reap judged, by the id its listing
// found (never a sandbox made under the name since).
func (a *Adapter) Reclaim(ctx context.Context, f paddock.SandboxFacts) error {
	if _, err := a.remove(ctx, f.Name, f.ID); err != nil && !cerrdefs.IsNotFound(err) {
		return engineError("remove "+f.Name, err)
	}
	return nil
}

// StopIdle stops a sandbox a reap judged idle: no exec of ours starts in
// it meanwhile.
func (a *Adapter) StopIdle(ctx context.Context, f paddock.SandboxFacts) error {
	zero := 0
	gate := a.execGate(f.Name)
	gate.Lock()
	defer gate.Unlock()
	if _, err := a.engine.ContainerStop(ctx, f.ID, client.ContainerStopOptions{Timeout: &zero}); err != nil && !cerrdefs.IsNotFound(err) {
		return engineError("stop "+f.Name, err)
	}
	a.links.drop(f.Name) // its relay ended with it
	return nil
}
