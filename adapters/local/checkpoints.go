package local

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/cpstore"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
	"github.com/paddockhq/paddock/adapters/internal/treecopy"
)

var (
	_ paddock.Checkpointer      = (*Adapter)(nil)
	_ paddock.CheckpointDeleter = (*Adapter)(nil)
	_ paddock.Forker            = (*Adapter)(nil)
)

// A checkpoint is a copy of a sandbox's files (its fs directory: files
// only, never its processes), kept under <root>/.checkpoints by a
// cpstore.Store within Config.Checkpoints. The copy shares blocks with
// the sandbox where the filesystem can (reflinks), and is taken with the
// sandbox's processes stopped, so it is one moment's files. A restore
// stops the sandbox's commands (their subscribers end with
// unavailable(checkpoint_restored)) and puts the files back; a fork is a
// new sandbox holding them, with the source's egress and network policy.
// Checkpoints outlive their sandbox by Config.Checkpoints.Retention.

// checkpointsDir is where, under the root, checkpoints are kept.
const checkpointsDir = ".checkpoints"

// checkpointExtra is what a checkpoint keeps of its sandbox beside its
// files: what a fork takes.
type checkpointExtra struct {
	Egress string                 `json:"egress"`
	Policy *paddock.NetworkPolicy `json:"policy,omitempty"`
}

// CreateCheckpoint copies the sandbox's files, its processes stopped
// meanwhile (SIGSTOP, then SIGCONT unless it was suspended).
func (a *Adapter) CreateCheckpoint(_ context.Context, h paddock.Handle, opts paddock.CheckpointOpts) (string, error) {
	m, err := a.readMeta(h.Name)
	if err != nil {
		return "", err
	}
	a.reapCheckpoints()
	dir := a.dirOf(h.Name)
	unlock := a.lockName("checkpoint:" + dir)
	defer unlock()
	if !m.Suspended {
		a.signalSandbox(dir, stubproc.SIGSTOP)
		defer a.signalSandbox(dir, stubproc.SIGCONT)
	}
	src := filepath.Join(dir, fsDir)
	size, err := treecopy.Measure(src)
	if err != nil {
		return "", unavailable("checkpoint", err)
	}
	extra, _ := json.Marshal(checkpointExtra{Egress: m.Egress, Policy: m.Policy})
	rec, err := a.checkpoints.Create(cpstore.Record{Sandbox: h.Name, Checkpoint: paddock.Checkpoint{Comment: opts.Comment}, Extra: extra},
		size.Bytes, func(data string) (int64, error) {
			copied, err := treecopy.Copy(src, data)
			return copied.Bytes, err
		})
	return rec.ID, err
}

// ListCheckpoints lists the sandbox's checkpoints, oldest first.
func (a *Adapter) ListCheckpoints(_ context.Context, h paddock.Handle) ([]paddock.Checkpoint, error) {
	if _, err := a.readMeta(h.Name); err != nil {
		return nil, err
	}
	a.reapCheckpoints()
	return a.checkpoints.List(h.Name)
}

// RestoreCheckpoint puts the checkpoint's files back: they are copied
// beside the sandbox's first (a failure there changes nothing), then its
// commands are stopped and the copy takes the place of its files.
func (a *Adapter) RestoreCheckpoint(ctx context.Context, h paddock.Handle, checkpointID string) error {
	if _, err := a.readMeta(h.Name); err != nil {
		return err
	}
	_, data, err := a.checkpoints.Get(h.Name, checkpointID)
	if err != nil {
		return err
	}
	dir := a.dirOf(h.Name)
	unlock := a.lockName("checkpoint:" + dir)
	defer unlock()
	staged := filepath.Join(dir, "fs.restore-"+randomID(""))
	if _, err := treecopy.Copy(data, staged); err != nil {
		_ = treecopy.RemoveAll(staged)
		return &paddock.RestoreFailedError{Detail: "local: copying the checkpoint: " + err.Error()}
	}
	a.killSandbox(ctx, dir, paddock.DetailCheckpointRestored)
	live := filepath.Join(dir, fsDir)
	old := filepath.Join(dir, "fs.old-"+randomID(""))
	if err := os.Rename(live, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		_ = treecopy.RemoveAll(staged)
		return &paddock.RestoreFailedError{Detail: "local: setting the sandbox's files aside: " + err.Error()}
	}
	if err := os.Rename(staged, live); err != nil {
		_ = os.Rename(old, live)
		_ = treecopy.RemoveAll(staged)
		return &paddock.RestoreFailedError{Detail: "local: putting the checkpoint's files in place: " + err.Error()}
	}
	if err := treecopy.RemoveAll(old); err != nil {
		a.log.Warn().Err(err).Str("dir", old).Msg("local: could not remove the files a restore replaced")
	}
	return nil
}

// DeleteCheckpoint removes one of the sandbox's checkpoints; one that is
// not there (or not this sandbox's) is success.
func (a *Adapter) DeleteCheckpoint(_ context.Context, h paddock.Handle, checkpointID string) error {
	return a.checkpoints.Delete(h.Name, checkpointID)
}

// Fork makes the sandbox name (never adopting: a taken name is
// already_exists) holding the checkpoint's files, with the egress and
// network policy its source had when it was taken. The checkpoint may
// outlive its source (within the retention).
func (a *Adapter) Fork(ctx context.Context, h paddock.Handle, checkpointID, name string, opts paddock.ForkOpts) (paddock.Handle, error) {
	rec, data, err := a.checkpoints.Get(h.Name, checkpointID)
	if err != nil {
		return paddock.Handle{}, err
	}
	var extra checkpointExtra
	if err := json.Unmarshal(rec.Extra, &extra); err != nil {
		return paddock.Handle{}, unavailable("reading a checkpoint", err)
	}
	nh, err := a.CreateNew(ctx, name, paddock.CreateNewOpts{Lease: opts.Lease})
	if err != nil {
		return paddock.Handle{}, err
	}
	fail := func(err error) (paddock.Handle, error) {
		_ = a.Destroy(context.WithoutCancel(ctx), nh)
		return paddock.Handle{}, unavailable("fork", err)
	}
	dir := a.dirOf(name)
	live := filepath.Join(dir, fsDir)
	if err := os.Remove(live); err != nil { // the new sandbox's empty files
		return fail(err)
	}
	if _, err := treecopy.Copy(data, live); err != nil {
		return fail(err)
	}
	m, err := a.readMeta(name)
	if err != nil {
		return fail(err)
	}
	m.Egress, m.Policy = extra.Egress, extra.Policy
	if err := writeJSON(filepath.Join(dir, metaFile), m, true); err != nil {
		return fail(err)
	}
	return nh, nil
}

// reapCheckpoints removes the checkpoints whose sandbox has been gone for
// longer than the retention (cpstore.Store.Reap logs what it did).
func (a *Adapter) reapCheckpoints() {
	_, _ = a.checkpoints.Reap(func(name string) bool {
		_, err := a.readMeta(name)
		return !errors.Is(err, paddock.ErrNotFound)
	})
}
