package docker

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/cpstore"
)

var (
	_ paddock.Checkpointer      = (*Adapter)(nil)
	_ paddock.CheckpointDeleter = (*Adapter)(nil)
	_ paddock.Forker            = (*Adapter)(nil)
)

// A sandbox's writable state is its scratch space (the root is read-only):
// a checkpoint is a tar archive of /tmp (but the session journals) and
// /workspace, written by tar inside the sandbox as its user and kept by
// the adapter, on its own host, in a cpstore.Store (Config.CheckpointDir,
// within Config.Checkpoints). It holds files only, taken with the sandbox
// user's processes stopped. A restore stops the sandbox's commands (they
// end unavailable(checkpoint_restored); execs are killed), empties the
// scratch space and extracts the archive; a fork is a new sandbox (the
// adapter's defaults, and the network policy its source keeps) with the
// archive extracted.

// archiveFile is a checkpoint's data: the scratch space as a tar archive.
const archiveFile = "scratch.tar"

// defaultCheckpointDir is where checkpoints are kept unless
// Config.CheckpointDir says: paddock/docker-checkpoints under the user's
// cache directory.
func defaultCheckpointDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "paddock", "docker-checkpoints")
	}
	return filepath.Join(os.TempDir(), "paddock-docker-checkpoints")
}

// CreateCheckpoint archives the sandbox's scratch space. It needs a
// running sandbox (a paused one cannot run the archiver: invalid). The
// sandbox user's processes are stopped while the archive is written
// (SIGSTOP, then SIGCONT), so it holds one moment's files.
func (a *Adapter) CreateCheckpoint(ctx context.Context, h paddock.Handle, opts paddock.CheckpointOpts) (string, error) {
	if err := a.checkpointable(ctx, h.Name); err != nil {
		return "", err
	}
	a.reapCheckpoints(ctx)
	rec, err := a.checkpoints.Create(cpstore.Record{Sandbox: h.Name, Checkpoint: paddock.Checkpoint{Comment: opts.Comment}}, 0,
		func(data string) (int64, error) {
			if err := os.Mkdir(data, 0o700); err != nil {
				return 0, err
			}
			// Readable by all: a fork's sandbox user reads it where it is
			// mounted; on this machine the store's directory (0700) keeps it.
			f, err := os.OpenFile(filepath.Join(data, archiveFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return 0, err
			}
			defer f.Close()
			n := &countingWriter{w: f}
			code, said, err := a.execInto(ctx, h.Name, execSpec{cmd: sh(scriptArchive)}, n)
			if err != nil {
				return 0, err
			}
			if code != 0 {
				return 0, &paddock.UnavailableError{Detail: "docker checkpoint: tar exited " + said}
			}
			return n.n, f.Sync()
		})
	if err != nil {
		return "", err
	}
	a.touch(h)
	return rec.ID, nil
}

// countingWriter counts what it writes to w.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// checkpointable refuses a sandbox that is absent (not_found) or not
// running (invalid: its scratch space cannot be read or written).
func (a *Adapter) checkpointable(ctx context.Context, name string) error {
	res, err := a.inspect(ctx, name)
	if err != nil {
		return err
	}
	if s := state(res); s != container.StateRunning {
		return &paddock.InvalidError{Detail: "docker: the sandbox is " + string(s) + "; checkpoints are taken and restored while it runs"}
	}
	return nil
}

// execInto runs e to its end, copying its stdout into w; it returns the
// exit code and the start of what it printed on stderr.
func (a *Adapter) execInto(ctx context.Context, sandbox string, e execSpec, w io.Writer) (int, string, error) {
	x, err := a.startExec(ctx, sandbox, e)
	if err != nil {
		return 0, "", err
	}
	defer x.close()
	stop := context.AfterFunc(ctx, x.close)
	defer stop()
	said := capped{max: 1024}
	if err := pump(ctx, x, w, &said); err != nil {
		return 0, "", err
	}
	code, err := a.finished(sandbox, x.id)
	return code, short(said.String()), err
}

// ListCheckpoints lists the sandbox's checkpoints, oldest first.
func (a *Adapter) ListCheckpoints(ctx context.Context, h paddock.Handle) ([]paddock.Checkpoint, error) {
	if _, err := a.inspect(ctx, h.Name); err != nil {
		return nil, err
	}
	a.reapCheckpoints(ctx)
	return a.checkpoints.List(h.Name)
}

// archiveOf opens the archive of the sandbox name's checkpoint id;
// not_found when it is not that sandbox's.
func (a *Adapter) archiveOf(name, id string) (*os.File, error) {
	_, data, err := a.checkpoints.Get(name, id)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(data, archiveFile))
	if err != nil {
		return nil, &paddock.UnavailableError{Detail: "docker: reading a checkpoint: " + short(err.Error())}
	}
	return f, nil
}

// RestoreCheckpoint stops the sandbox's commands, empties its scratch
// space and extracts the checkpoint there; a failure after the commands
// were stopped is restore_failed.
func (a *Adapter) RestoreCheckpoint(ctx context.Context, h paddock.Handle, checkpointID string) error {
	if err := a.checkpointable(ctx, h.Name); err != nil {
		return err
	}
	f, err := a.archiveOf(h.Name, checkpointID)
	if err != nil {
		return err
	}
	defer f.Close()
	a.restores.Begin(h.Name) // before the kills: a TTY session may end before they answer
	if _, err := a.run(ctx, h.Name, execSpec{cmd: sh(scriptStopCommands, sessionBase, paddock.DetailCheckpointRestored)}, nil); err != nil {
		return &paddock.RestoreFailedError{Detail: "docker: stopping the commands: " + err.Error()}
	}
	if err := a.unarchive(ctx, h.Name, f); err != nil {
		return &paddock.RestoreFailedError{Detail: "docker: " + err.Error()}
	}
	a.touch(h)
	return nil
}

// unarchive empties the sandbox's scratch space and extracts archive.
func (a *Adapter) unarchive(ctx context.Context, name string, archive io.Reader) error {
	out, err := a.run(ctx, name, execSpec{cmd: sh(scriptUnarchive)}, archive)
	switch {
	case err != nil:
		return err
	case out.code != 0:
		return errors.New("extracting the checkpoint: " + short(string(out.stderr)))
	case out.fed != nil:
		return errors.New("extracting the checkpoint: " + short(out.fed.Error()))
	}
	return nil
}

// DeleteCheckpoint removes one of the sandbox's checkpoints; one that is
// not there (or not this sandbox's) is success.
func (a *Adapter) DeleteCheckpoint(_ context.Context, h paddock.Handle, checkpointID string) error {
	return a.checkpoints.Delete(h.Name, checkpointID)
}

// Fork makes the sandbox name (never adopting: a taken name is
// already_exists) with the adapter's defaults, and extracts the
// checkpoint into its scratch space; a gated fork takes the network
// policy its source keeps. The checkpoint may outlive its source (within
// the retention). On an engine of this machine (a unix socket) the
// archive is mounted read-only into the fork and extracted from there;
// where the engine cannot see it (it refuses the mount, or the file it
// shows is not the archive) its bytes go through the exec's stdin.
func (a *Adapter) Fork(ctx context.Context, h paddock.Handle, checkpointID, name string, opts paddock.ForkOpts) (paddock.Handle, error) {
	create, err := paddock.ValidateCreateNew(name, paddock.CreateNewOpts{Lease: opts.Lease})
	if err != nil {
		return paddock.Handle{}, err
	}
	f, err := a.archiveOf(h.Name, checkpointID)
	if err != nil {
		return paddock.Handle{}, err
	}
	defer f.Close()
	seed := ""
	if a.seedForks {
		seed = f.Name()
	}
	nh, err := a.createFresh(ctx, name, opts.Lease, *create.Timeout, seed)
	if err != nil && seed != "" && strings.Contains(err.Error(), "bind source path") {
		seed = "" // the engine is on another machine
		nh, err = a.createFresh(ctx, name, opts.Lease, *create.Timeout, "")
	}
	if err != nil {
		return paddock.Handle{}, err
	}
	fail := func(err error) (paddock.Handle, error) {
		_ = a.Destroy(context.WithoutCancel(ctx), nh)
		return paddock.Handle{}, err
	}
	seeded := false
	if seed != "" {
		info, err := f.Stat()
		if err != nil {
			return fail(&paddock.UnavailableError{Detail: "docker fork: " + short(err.Error())})
		}
		out, err := a.run(ctx, name, execSpec{cmd: sh(scriptUnarchiveSeed, strconv.FormatInt(info.Size(), 10))}, nil)
		switch {
		case err != nil:
			return fail(err)
		case out.code == 0:
			seeded = true
		case out.code != 4: // 4: not the archive meant; its bytes go through stdin below
			return fail(&paddock.UnavailableError{Detail: "docker fork: extracting the checkpoint: " + short(string(out.stderr))})
		}
	}
	if !seeded {
		if err := a.unarchive(ctx, name, f); err != nil {
			return fail(&paddock.UnavailableError{Detail: "docker fork: " + short(err.Error())})
		}
	}
	if err := a.forkPolicy(ctx, h.Name, nh); err != nil {
		return fail(err)
	}
	return nh, nil
}

// forkPolicy gives a gated fork the network policy its source keeps (a
// source with none applied, or ungated, leaves the fork denying all).
func (a *Adapter) forkPolicy(ctx context.Context, source string, fork paddock.Handle) error {
	if !a.cfg.Helpers {
		return nil
	}
	res, err := a.inspect(ctx, source)
	if errors.Is(err, paddock.ErrNotFound) {
		return nil // the source is gone: nothing to take
	}
	if err != nil {
		return err
	}
	if res.Container.Config == nil || !gatedEnv(res.Container.Config.Env) {
		return nil
	}
	allow, kept, err := a.keptPolicy(ctx, res.Container.ID)
	if err != nil || !kept {
		return err
	}
	return a.ApplyNetworkPolicy(ctx, fork, paddock.NetworkPolicy{Allow: allow})
}

// reapCheckpoints removes the checkpoints whose sandbox has been gone for
// longer than the retention (cpstore.Store.Reap logs what it did). A
// sandbox counts as gone only when the engine says so.
func (a *Adapter) reapCheckpoints(ctx context.Context) {
	_, _ = a.checkpoints.Reap(func(name string) bool {
		_, err := a.inspect(ctx, name)
		return !errors.Is(err, paddock.ErrNotFound)
	})
}
