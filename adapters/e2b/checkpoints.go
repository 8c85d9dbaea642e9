package e2b

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
	"github.com/paddockhq/paddock/adapters/internal/snapshots"
)

var (
	_ paddock.Checkpointer      = (*Adapter)(nil)
	_ paddock.CheckpointDeleter = (*Adapter)(nil)
	_ paddock.Forker            = (*Adapter)(nil)
)

// A checkpoint is an E2B snapshot (POST /sandboxes/{id}/snapshots): a
// template build holding the sandbox's files and memory, which outlives
// the sandbox. Each is named by package snapshots, so a sandbox's
// checkpoints are found by name alone (its E2B id changes on a restore),
// and one sandbox's checkpoint is never taken for another's. E2B has no
// restore in place: a restore makes a new sandbox from the snapshot under
// the same name (metadata, lease and network policy carried over) and
// kills the old one, whose commands end unavailable(checkpoint_restored).
// A fork is a new sandbox made from the snapshot under its own name.
// E2B reports no size, so Config.Checkpoints bounds the count only.

// ownCheckpoint reports whether the snapshot id (namespace/alias:tag)
// is one of sandbox name's.
func ownCheckpoint(name, id string) bool { return snapshots.Owns(name, aliasOf(id)) }

// snapshotEntry is one entry of GET /snapshots.
type snapshotEntry struct {
	SnapshotID string   `json:"snapshotID"`
	Names      []string `json:"names"`
}

// alias is the entry's name without namespace or tag.
func (e snapshotEntry) alias() string {
	if len(e.Names) > 0 {
		return aliasOf(e.Names[0])
	}
	return aliasOf(e.SnapshotID)
}

// aliasOf is the alias of a snapshot reference "namespace/alias:tag".
func aliasOf(ref string) string {
	ref, _, _ = strings.Cut(ref, ":")
	if i := strings.LastIndexByte(ref, '/'); i >= 0 {
		ref = ref[i+1:]
	}
	return ref
}

// eachSnapshot calls fn on every snapshot of this adapter's making, page
// by page; past maxListPages it refuses with ErrTruncated.
func (a *Adapter) eachSnapshot(ctx context.Context, fn func(snapshotEntry)) error {
	token := ""
	for range maxListPages {
		q := url.Values{"limit": {"100"}}
		if token != "" {
			q.Set("nextToken", token)
		}
		status, header, data, err := a.rest.Call(ctx, a.client, http.MethodGet, "/snapshots", q, nil)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return a.rest.StatusError(status, header, data)
		}
		var page []snapshotEntry
		if err := a.rest.Decode(data, &page); err != nil {
			return err
		}
		for _, e := range page {
			if snapshots.KeyOf(e.alias()) != "" {
				fn(e)
			}
		}
		token = header.Get("X-Next-Token")
		if token == "" {
			return nil
		}
	}
	return paddock.ErrTruncated
}

// CreateCheckpoint snapshots the sandbox (resuming it first when it is
// paused), within the count limit; E2B keeps no comment.
func (a *Adapter) CreateCheckpoint(ctx context.Context, h paddock.Handle, _ paddock.CheckpointOpts) (string, error) {
	id, err := a.running(ctx, h)
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
	status, header, data, err := a.rest.Call(ctx, a.streaming, http.MethodPost, sandboxPath(id, "snapshots"), nil,
		map[string]string{"name": snapshots.New(h.Name, time.Now())})
	if err != nil {
		return "", err
	}
	if status != http.StatusCreated && status != http.StatusOK {
		return "", a.rest.StatusError(status, header, data)
	}
	var made snapshotEntry
	if err := a.rest.Decode(data, &made); err != nil {
		return "", err
	}
	if !ownCheckpoint(h.Name, made.SnapshotID) {
		return "", &paddock.ProviderError{Provider: paddock.ProviderE2B, Detail: "the snapshot answered is not the one asked for: " + strconv.Quote(made.SnapshotID)}
	}
	return made.SnapshotID, nil
}

// ListCheckpoints lists the sandbox's snapshots, oldest first.
func (a *Adapter) ListCheckpoints(ctx context.Context, h paddock.Handle) ([]paddock.Checkpoint, error) {
	if err := paddock.ValidateSandboxName(h.Name); err != nil {
		return nil, err
	}
	out := []paddock.Checkpoint{}
	err := a.eachSnapshot(ctx, func(e snapshotEntry) {
		if alias := e.alias(); snapshots.Owns(h.Name, alias) {
			out = append(out, paddock.Checkpoint{ID: e.SnapshotID, CreatedAt: snapshots.Time(alias), Memory: true})
		}
	})
	slices.SortStableFunc(out, func(x, y paddock.Checkpoint) int { return x.CreatedAt.Compare(y.CreatedAt) })
	return out, err
}

// DeleteCheckpoint deletes the snapshot (its template); an absent one, or
// another sandbox's, is success.
func (a *Adapter) DeleteCheckpoint(ctx context.Context, h paddock.Handle, checkpointID string) error {
	if err := paddock.ValidateSandboxName(h.Name); err != nil {
		return err
	}
	if !ownCheckpoint(h.Name, checkpointID) {
		return nil
	}
	return a.deleteSnapshot(ctx, checkpointID)
}

// deleteSnapshot deletes snapshot id; a 404 is success.
func (a *Adapter) deleteSnapshot(ctx context.Context, id string) error {
	return a.rest.Expect(ctx, a.client, http.MethodDelete, "/templates/"+httpx.Escape(id), nil,
		http.StatusNoContent, http.StatusOK, http.StatusNotFound)
}

// sandboxNetwork is the network configuration a sandbox was given, as
// GET /sandboxes/{id} answers it (nil: none).
func (a *Adapter) sandboxNetwork(ctx context.Context, id string) (json.RawMessage, error) {
	status, header, data, err := a.rest.Call(ctx, a.client, http.MethodGet, sandboxPath(id), nil, nil)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, a.rest.StatusError(status, header, data)
	}
	var detail struct {
		Network json.RawMessage `json:"network"`
	}
	if err := a.rest.Decode(data, &detail); err != nil {
		return nil, err
	}
	if string(detail.Network) == "null" {
		return nil, nil
	}
	return detail.Network, nil
}

// createFrom makes a sandbox from snapshot checkpointID with metadata and
// network; a snapshot E2B does not know is not_found.
func (a *Adapter) createFrom(ctx context.Context, checkpointID string, metadata map[string]string, network json.RawMessage) (string, error) {
	body := map[string]any{"templateID": checkpointID, "timeout": a.ttlSeconds(), "autoPause": true, "metadata": metadata}
	if network != nil {
		body["network"] = network
	}
	status, header, data, err := a.rest.Call(ctx, a.client, http.MethodPost, "/sandboxes", nil, body)
	switch {
	case err != nil:
		return "", err
	case status == http.StatusNotFound:
		return "", paddock.ErrNotFound
	case status < 200 || status > 299:
		return "", a.rest.StatusError(status, header, data)
	}
	var c created
	if err := a.rest.Decode(data, &c); err != nil {
		return "", err
	}
	if c.id() == "" {
		return "", &paddock.ProviderError{Provider: paddock.ProviderE2B, Detail: "create answered no sandbox id"}
	}
	return c.id(), nil
}

// RestoreCheckpoint replaces the sandbox with one made from the snapshot:
// same name, metadata, lease and network policy. A snapshot not the
// sandbox's, or gone, is not_found; a failure to make the new sandbox is
// restore_failed and leaves the old one as it was. Once the new one
// exists, the old one is killed: its commands end
// unavailable(checkpoint_restored).
func (a *Adapter) RestoreCheckpoint(ctx context.Context, h paddock.Handle, checkpointID string) error {
	old, err := a.mustFind(ctx, h)
	if err != nil {
		return err
	}
	if !ownCheckpoint(h.Name, checkpointID) {
		return paddock.ErrNotFound
	}
	network, err := a.sandboxNetwork(ctx, old.SandboxID) // a paused one's too
	if err != nil {
		return err
	}
	lease, read := paddock.Lease{}, leaseUnreadable // a paused sandbox's file cannot be read: the snapshot's stays
	if old.State == stateRunning {
		lease, read = a.leaseIn(ctx, old.SandboxID)
	}
	a.restores.Begin(h.Name) // before the kill: its commands may end before it answers
	id, err := a.createFrom(ctx, checkpointID, old.Metadata, network)
	switch {
	case paddock.KindOf(err) == paddock.KindNotFound:
		return err
	case err != nil:
		return &paddock.RestoreFailedError{Detail: "e2b: a sandbox from snapshot " + checkpointID + ": " + err.Error()}
	}
	if err := a.carryLease(ctx, id, lease, read); err != nil {
		_ = a.kill(ctx, id)
		return &paddock.RestoreFailedError{Detail: "e2b: the restored sandbox's lease: " + err.Error()}
	}
	// Kill every other sandbox of the name (a racing create may have made
	// two): the new one is the newest, so lookups already find it.
	page, _, err := a.listPage(ctx, url.Values{"metadata": {metaFilter(metaName, h.Name)}}, "")
	if err != nil {
		return err
	}
	for _, l := range page {
		if l.SandboxID == id {
			continue
		}
		if err := a.kill(ctx, l.SandboxID); err != nil {
			return err
		}
	}
	return nil
}

// carryLease gives the sandbox id the lease its predecessor had: the file
// the snapshot copied holds the lease of the snapshot's moment.
func (a *Adapter) carryLease(ctx context.Context, id string, lease paddock.Lease, read leaseRead) error {
	switch read {
	case leaseFound:
		return a.claim(ctx, id, lease)
	case leaseAbsent:
		return a.forgetLease(ctx, id)
	}
	return nil // unknown: the snapshot's stays
}

// Fork makes a new sandbox called name from the snapshot, with its own
// lease (opts.Lease) and the source's network policy; the source is
// untouched. A taken name is already_exists; a snapshot not the
// source's, or gone, is not_found.
func (a *Adapter) Fork(ctx context.Context, h paddock.Handle, checkpointID, name string, opts paddock.ForkOpts) (paddock.Handle, error) {
	src, err := a.mustFind(ctx, h)
	if err != nil {
		return paddock.Handle{}, err
	}
	if !ownCheckpoint(h.Name, checkpointID) {
		return paddock.Handle{}, paddock.ErrNotFound
	}
	taken, err := a.find(ctx, name)
	if err != nil {
		return paddock.Handle{}, err
	}
	if taken != nil {
		return paddock.Handle{}, paddock.ErrAlreadyExists
	}
	network, err := a.sandboxNetwork(ctx, src.SandboxID) // a paused one's too
	if err != nil {
		return paddock.Handle{}, err
	}
	id, err := a.createFrom(ctx, checkpointID, a.createMetadata(name, opts.Lease), network)
	if err != nil {
		return paddock.Handle{}, err
	}
	read := leaseAbsent
	if !opts.Lease.IsZero() {
		read = leaseFound
	}
	if err := a.carryLease(ctx, id, opts.Lease, read); err != nil {
		_ = a.kill(ctx, id)
		return paddock.Handle{}, err
	}
	return a.BuildHandle(name), nil
}

// reapSnapshots deletes the snapshots whose sandbox has been found gone
// for longer than the retention, and answers how many remain.
func (a *Adapter) reapSnapshots(ctx context.Context) (int, error) {
	live := map[string]bool{}
	if err := a.eachOurs(ctx, func(l listed) { live[snapshots.Key(l.Metadata[metaName])] = true }); err != nil {
		return 0, err
	}
	byAlias := map[string]string{} // alias: snapshot id
	var aliases []string
	if err := a.eachSnapshot(ctx, func(e snapshotEntry) {
		byAlias[e.alias()] = e.SnapshotID
		aliases = append(aliases, e.alias())
	}); err != nil {
		return 0, err
	}
	doomed := a.gone.Doomed(aliases, func(key string) bool { return live[key] }, a.limits.Retention, time.Now())
	removed := 0
	for _, alias := range doomed {
		if err := a.deleteSnapshot(ctx, byAlias[alias]); err != nil {
			a.log.Warn().Err(err).Str("checkpoint", byAlias[alias]).Msg("e2b: reaping a checkpoint")
			continue
		}
		removed++
		a.gone.Forget(alias)
	}
	if removed > 0 {
		a.log.Info().Int("removed", removed).Msg("e2b: reaped the checkpoints of sandboxes gone")
	}
	return len(aliases) - removed, nil
}
