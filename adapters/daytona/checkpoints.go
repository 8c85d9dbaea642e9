package daytona

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
	"github.com/paddockhq/paddock/adapters/internal/reaping"
	"github.com/paddockhq/paddock/adapters/internal/snapshots"
)

var (
	_ paddock.Checkpointer      = (*Adapter)(nil)
	_ paddock.CheckpointDeleter = (*Adapter)(nil)
	_ paddock.Forker            = (*Adapter)(nil)
)

// A checkpoint is a Daytona snapshot of the sandbox (POST
// /sandbox/{name}/snapshot): its files (Daytona keeps memory only for
// Windows sandboxes), kept by the organization beyond the sandbox, named
// by package snapshots, so a sandbox's are found by name and never taken
// for another's. Daytona restores nothing in place, and forks only VM
// sandboxes, so a restore replaces the sandbox with one made from the
// snapshot under the same name (labels, so the lease, environment,
// intervals and network settings carried over); a fork makes one under a
// new name. Daytona reports no size: Config.Checkpoints bounds the count.

// snapshotDTO is the part of Daytona's Snapshot object the adapter reads.
type snapshotDTO struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	State string `json:"state"`
}

// gone reports a snapshot deleted or on its way out.
func (s snapshotDTO) gone() bool { return s.State == "removing" || s.State == "removed" }

// eachSnapshot calls fn on every snapshot of this adapter's making, page
// by page (the listing filters by a part of the name); past maxListPages
// it refuses with ErrTruncated.
func (a *Adapter) eachSnapshot(ctx context.Context, fn func(snapshotDTO)) error {
	for page := 1; page <= maxListPages; page++ {
		var body struct {
			Items      []snapshotDTO `json:"items"`
			TotalPages int           `json:"totalPages"`
		}
		q := url.Values{"name": {snapshots.Prefix}, "limit": {"200"}, "page": {strconv.Itoa(page)}}
		if err := a.rest.JSON(ctx, a.client, http.MethodGet, "/snapshots", q, nil, &body); err != nil {
			return err
		}
		for _, s := range body.Items {
			if snapshots.KeyOf(s.Name) != "" && !s.gone() {
				fn(s)
			}
		}
		if page >= body.TotalPages {
			return nil
		}
	}
	return paddock.ErrTruncated
}

// snapshot answers the snapshot called name; not_found when there is
// none, or it is on its way out.
func (a *Adapter) snapshot(ctx context.Context, name string) (snapshotDTO, error) {
	var s snapshotDTO
	if err := a.rest.Found(ctx, a.client, http.MethodGet, "/snapshots/"+httpx.Escape(name), nil, nil, &s); err != nil {
		return s, err
	}
	if s.Name != name || s.gone() {
		return s, paddock.ErrNotFound
	}
	return s, nil
}

// CreateCheckpoint snapshots the sandbox (started or stopped) within the
// count limit, and waits until the snapshot is active and the sandbox
// back in its state; Daytona keeps no comment.
func (a *Adapter) CreateCheckpoint(ctx context.Context, h paddock.Handle, _ paddock.CheckpointOpts) (string, error) {
	sb, err := a.mustLookup(ctx, h)
	if err != nil {
		return "", err
	}
	count, err := a.reapSnapshots(ctx)
	if err != nil {
		return "", err
	}
	if count >= a.limits.MaxCount {
		return "", &paddock.InvalidError{Detail: paddock.DetailCheckpointLimit + ": " + strconv.Itoa(count) + " checkpoints kept, at most " + strconv.Itoa(a.limits.MaxCount)}
	}
	name := snapshots.New(h.Name, time.Now())
	if err := a.snapshotOf(ctx, h.Name, sb.State, name); err != nil {
		return "", err
	}
	return name, nil
}

// snapshotOf snapshots the sandbox called sandbox, in state, as name (a
// fresh name: a 409 is a transition under way, never a name taken), and
// waits for both to settle.
func (a *Adapter) snapshotOf(ctx context.Context, sandbox, state, name string) error {
	if err := a.transition(ctx, sandbox, "snapshot", map[string]any{"name": name}, nil); err != nil {
		return err
	}
	if _, err := a.waitFor(ctx, sandbox, state); err != nil {
		return err
	}
	return a.settled(ctx, func() (bool, error) {
		s, err := a.snapshot(ctx, name)
		switch {
		case err != nil:
			return false, err
		case s.State == "active":
			return true, nil
		case s.State == "error" || s.State == "build_failed":
			return false, &paddock.ProviderError{Provider: paddock.ProviderDaytona, Detail: "snapshot " + name + " is in state " + s.State}
		}
		return false, nil
	})
}

// ListCheckpoints lists the sandbox's snapshots, oldest first.
func (a *Adapter) ListCheckpoints(ctx context.Context, h paddock.Handle) ([]paddock.Checkpoint, error) {
	if err := paddock.ValidateSandboxName(h.Name); err != nil {
		return nil, err
	}
	out := []paddock.Checkpoint{}
	err := a.eachSnapshot(ctx, func(s snapshotDTO) {
		if snapshots.Owns(h.Name, s.Name) {
			out = append(out, paddock.Checkpoint{ID: s.Name, CreatedAt: snapshots.Time(s.Name)})
		}
	})
	slices.SortStableFunc(out, func(x, y paddock.Checkpoint) int { return x.CreatedAt.Compare(y.CreatedAt) })
	return out, err
}

// DeleteCheckpoint deletes the snapshot; an absent one, or another
// sandbox's, is success.
func (a *Adapter) DeleteCheckpoint(ctx context.Context, h paddock.Handle, checkpointID string) error {
	if err := paddock.ValidateSandboxName(h.Name); err != nil {
		return err
	}
	if !snapshots.Owns(h.Name, checkpointID) {
		return nil
	}
	return a.deleteSnapshot(ctx, checkpointID)
}

// deleteSnapshot deletes the snapshot called name (Daytona deletes by
// id); an absent one is success.
func (a *Adapter) deleteSnapshot(ctx context.Context, name string) error {
	s, err := a.snapshot(ctx, name)
	if errors.Is(err, paddock.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return a.rest.Expect(ctx, a.client, http.MethodDelete, "/snapshots/"+httpx.Escape(s.ID), nil,
		http.StatusOK, http.StatusNoContent, http.StatusNotFound)
}

// settings is what a sandbox made again from a snapshot takes of the one
// it replaces, as Daytona's Sandbox object carries it.
type settings struct {
	Labels           map[string]string `json:"labels"`
	Env              map[string]string `json:"env"`
	AutoStop         *int              `json:"autoStopInterval"`
	AutoArchive      *int              `json:"autoArchiveInterval"`
	AutoDelete       *int              `json:"autoDeleteInterval"`
	NetworkBlockAll  bool              `json:"networkBlockAll"`
	NetworkAllowList *string           `json:"networkAllowList"`
	DomainAllowList  *string           `json:"domainAllowList"`
}

// network is the body of network-settings that gives a sandbox these
// settings' egress, or nil when they allow all.
func (s settings) network() map[string]any {
	if !s.NetworkBlockAll && s.NetworkAllowList == nil && s.DomainAllowList == nil {
		return nil
	}
	body := map[string]any{"networkBlockAll": s.NetworkBlockAll}
	if s.NetworkAllowList != nil {
		body["networkAllowList"] = *s.NetworkAllowList
	}
	if s.DomainAllowList != nil {
		body["domainAllowList"] = *s.DomainAllowList
	}
	return body
}

// createFrom makes the sandbox name from the snapshot with these settings
// and waits until it has started. A name taken is already_exists, a
// snapshot Daytona does not know not_found.
func (a *Adapter) createFrom(ctx context.Context, name, snapshot string, s settings) error {
	body := map[string]any{"name": name, "snapshot": snapshot, "labels": s.Labels}
	if len(s.Env) > 0 {
		body["env"] = s.Env
	}
	for k, v := range map[string]*int{"autoStopInterval": s.AutoStop, "autoArchiveInterval": s.AutoArchive, "autoDeleteInterval": s.AutoDelete} {
		if v != nil {
			body[k] = *v
		}
	}
	status, header, data, err := a.rest.Call(ctx, a.client, http.MethodPost, "/sandbox", nil, body)
	switch {
	case err != nil:
		return err
	case status == http.StatusConflict:
		return paddock.ErrAlreadyExists
	case status == http.StatusBadRequest && snapshotUnknown(data):
		return paddock.ErrNotFound
	case status < 200 || status > 299:
		return a.createError(status, header, data)
	}
	if _, err := a.waitFor(ctx, name, stateStarted); err != nil {
		return err
	}
	if net := s.network(); net != nil {
		return a.rest.Found(ctx, a.client, http.MethodPost, sandboxPath(name, "network-settings"), nil, net, nil)
	}
	return nil
}

// snapshotUnknown reports Daytona's refusal of a create for a snapshot it
// does not know.
func snapshotUnknown(data []byte) bool {
	msg := errorMessage(data)
	return strings.HasPrefix(msg, "Snapshot ") && strings.HasSuffix(msg, " not found. Did you add it through the Daytona Dashboard?")
}

// settingsOf reads the settings of a sandbox's object.
func (a *Adapter) settingsOf(sb *sandbox) (settings, error) {
	var s settings
	err := a.rest.Decode(sb.raw, &s)
	return s, err
}

// RestoreCheckpoint replaces the sandbox with one made from the snapshot
// under the same name (labels, environment, intervals, network settings
// carried over); its commands end unavailable(checkpoint_restored). A
// snapshot not the sandbox's, or gone, is not_found. The sandbox's state
// is snapshotted first: a restore that fails after the old sandbox went
// makes it again from that, and is restore_failed.
func (a *Adapter) RestoreCheckpoint(ctx context.Context, h paddock.Handle, checkpointID string) error {
	old, err := a.mustLookup(ctx, h)
	if err != nil {
		return err
	}
	if !snapshots.Owns(h.Name, checkpointID) {
		return paddock.ErrNotFound
	}
	if _, err := a.snapshot(ctx, checkpointID); err != nil {
		return err
	}
	s, err := a.settingsOf(old)
	if err != nil {
		return err
	}
	state := old.State
	if state != stateStarted && state != stateStopped {
		if old, err = a.started(ctx, h); err != nil {
			return err
		}
		state = old.State
	}
	safety := snapshots.New(h.Name, time.Now()) + "-before-restore"
	if err := a.snapshotOf(ctx, h.Name, state, safety); err != nil {
		return &paddock.RestoreFailedError{Detail: "daytona: a snapshot of the sandbox as it is: " + err.Error()}
	}
	a.restores.Begin(h.Name) // before the delete: its commands may end before it answers
	if err := a.Destroy(ctx, h); err != nil {
		_ = a.deleteSnapshot(context.WithoutCancel(ctx), safety)
		return &paddock.RestoreFailedError{Detail: "daytona: removing the sandbox: " + err.Error()}
	}
	restoreErr := a.createFrom(ctx, h.Name, checkpointID, s)
	if restoreErr == nil {
		return a.deleteSnapshot(ctx, safety)
	}
	// Make it again as it was; the snapshot of that is kept if even that
	// fails, and named.
	if err := a.createFrom(context.WithoutCancel(ctx), h.Name, safety, s); err != nil {
		return &paddock.RestoreFailedError{Detail: "daytona: " + restoreErr.Error() + "; making the sandbox again as it was failed too (" + err.Error() +
			"): its files are kept in snapshot " + safety}
	}
	_ = a.deleteSnapshot(context.WithoutCancel(ctx), safety)
	return &paddock.RestoreFailedError{Detail: "daytona: " + restoreErr.Error() + " (the sandbox was made again as it was before the restore)"}
}

// Fork makes the sandbox name from the snapshot, with the source's
// environment, intervals and network settings and its own lease; the
// source is untouched. A taken name is already_exists; a snapshot not the
// source's, or gone, is not_found.
func (a *Adapter) Fork(ctx context.Context, h paddock.Handle, checkpointID, name string, opts paddock.ForkOpts) (paddock.Handle, error) {
	src, err := a.mustLookup(ctx, h)
	if err != nil {
		return paddock.Handle{}, err
	}
	if !snapshots.Owns(h.Name, checkpointID) {
		return paddock.Handle{}, paddock.ErrNotFound
	}
	if _, err := a.lookup(ctx, name); err == nil {
		return paddock.Handle{}, paddock.ErrAlreadyExists
	} else if !errors.Is(err, paddock.ErrNotFound) {
		return paddock.Handle{}, err
	}
	s, err := a.settingsOf(src)
	if err != nil {
		return paddock.Handle{}, err
	}
	base, err := a.createBody(name, nil)
	if err != nil {
		return paddock.Handle{}, err
	}
	s.Labels = reaping.Labels(base["labels"].(map[string]string), opts.Lease, a.cfg.MaxAge)
	if err := a.createFrom(ctx, name, checkpointID, s); err != nil {
		return paddock.Handle{}, err
	}
	return a.BuildHandle(name), nil
}

// reapSnapshots deletes the snapshots whose sandbox has been found gone
// for longer than the retention, and answers how many remain.
func (a *Adapter) reapSnapshots(ctx context.Context) (int, error) {
	live := map[string]bool{}
	if err := a.eachSandbox(ctx, func(sb sandbox) { live[snapshots.Key(sb.Name)] = true }); err != nil {
		return 0, err
	}
	var names []string
	if err := a.eachSnapshot(ctx, func(s snapshotDTO) { names = append(names, s.Name) }); err != nil {
		return 0, err
	}
	removed := 0
	for _, n := range a.gone.Doomed(names, func(key string) bool { return live[key] }, a.limits.Retention, time.Now()) {
		if err := a.deleteSnapshot(ctx, n); err != nil {
			a.log.Warn().Err(err).Str("checkpoint", n).Msg("daytona: reaping a checkpoint")
			continue
		}
		removed++
		a.gone.Forget(n)
	}
	if removed > 0 {
		a.log.Info().Int("removed", removed).Msg("daytona: reaped the checkpoints of sandboxes gone")
	}
	return len(names) - removed, nil
}
