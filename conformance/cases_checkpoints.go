package conformance

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io/fs"
	"math/rand/v2"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

// checkpointDir is where the checkpoint cases keep their files: the path a
// command and the file calls agree on everywhere.
const checkpointDir = "/tmp/conformance-checkpoint"

// checkpointedFile is one file the checkpoint cases write and check.
type checkpointedFile struct {
	path string
	mode fs.FileMode
	data []byte
}

// writeCheckpointed writes the checkpoint cases' files (a large one
// included) and, with a shell, a relative symbolic link to one of them.
func writeCheckpointed(t testing.TB, s *suite, h paddock.Handle) []checkpointedFile {
	t.Helper()
	big := make([]byte, bigFileSize)
	rng := rand.New(rand.NewPCG(36, 37))
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	files := []checkpointedFile{
		{checkpointDir + "/a.txt", 0o644, []byte("alpha\n")},
		{checkpointDir + "/sub/run.sh", 0o755, []byte("#!/bin/sh\necho run\n")},
		{checkpointDir + "/big.bin", 0o600, big},
		{checkpointDir + "/removed-later", 0o644, []byte("kept by the checkpoint\n")},
	}
	for _, f := range files {
		require.NoError(t, s.a.WriteFile(s.ctx(t), h, f.path, f.mode, bytes.NewReader(f.data)), f.path)
	}
	if s.cfg.Fixtures.Programs {
		ln := paddock.NewCmd("ln", "-s", "a.txt", "link")
		ln.Dir = checkpointDir
		res, err := s.a.Exec(s.ctx(t), h, ln, paddock.ExecOpts{})
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode, "ln -s: %s", res.Stderr)
	}
	return files
}

// requireCheckpointed checks that h holds files exactly (content by SHA,
// modes), the link where there is a shell, and nothing at extra.
func requireCheckpointed(t testing.TB, s *suite, h paddock.Handle, files []checkpointedFile, extra string) {
	t.Helper()
	ctx := s.ctx(t)
	for _, f := range files {
		require.Equal(t, sha256.Sum256(f.data), sha256.Sum256(readAll(t, s, h, f.path)), "%s: the checkpoint's content", f.path)
		info, err := paddock.Stat(ctx, s.a, h, f.path)
		if errors.Is(err, paddock.ErrNotSupported) {
			continue // no file operations: content only
		}
		require.NoError(t, err, f.path)
		require.Equal(t, f.mode, info.Mode.Perm(), "%s: its mode", f.path)
	}
	if s.cfg.Fixtures.Programs {
		readlink := paddock.NewCmd("readlink", "link")
		readlink.Dir = checkpointDir
		res, err := s.a.Exec(ctx, h, readlink, paddock.ExecOpts{})
		require.NoError(t, err)
		require.Equal(t, "a.txt\n", string(res.Stdout), "the link is a link, to the same target")
	}
	_, err := s.a.ReadFile(ctx, h, extra)
	requireKind(t, err, paddock.ErrNotFound, "%s was written after the checkpoint", extra)
}

// listed reports whether id is among h's checkpoints, and that entry.
func listed(t testing.TB, s *suite, h paddock.Handle, id string) (paddock.Checkpoint, bool) {
	t.Helper()
	cps, err := paddock.ListCheckpoints(s.ctx(t), s.a, h)
	require.NoError(t, err)
	for _, c := range cps {
		if c.ID == id {
			return c, true
		}
	}
	return paddock.Checkpoint{}, false
}

// 36. A restore brings every file back exactly (content by SHA, modes,
// links), removes what was written since, and stops the sandbox's
// commands: each subscriber gets one terminal frame, saying why. An
// unknown checkpoint is not_found (restore_failed where the provider
// answers it only as a failed restore).
func restoreIsExact(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	files := writeCheckpointed(t, s, h)
	id, err := paddock.CreateCheckpoint(ctx, s.a, h, paddock.CheckpointOpts{Comment: "conformance 36"})
	require.NoError(t, err)
	cp, ok := listed(t, s, h, id)
	require.True(t, ok, "the checkpoint is listed")
	if cp.Size > 0 {
		require.GreaterOrEqual(t, cp.Size, int64(bigFileSize), "its size counts what it holds")
	}

	extra := checkpointDir + "/written-after"
	require.NoError(t, s.a.WriteFile(ctx, h, files[0].path, 0o644, bytes.NewReader([]byte("changed\n"))))
	require.NoError(t, s.a.WriteFile(ctx, h, files[2].path, 0o600, bytes.NewReader([]byte("truncated"))))
	require.NoError(t, s.a.WriteFile(ctx, h, extra, 0o644, bytes.NewReader([]byte("new\n"))))
	if err := paddock.Remove(ctx, s.a, h, files[3].path, paddock.RemoveOpts{}); !errors.Is(err, paddock.ErrNotSupported) {
		require.NoError(t, err)
	}
	st := s.spawn(t, h, s.cfg.Fixtures.SpawnStay, true)
	s.stdoutUntil(t, st, "ready")

	require.NoError(t, paddock.RestoreCheckpoint(ctx, s.a, h, id))
	ev := s.terminal(t, st)
	require.Equal(t, paddock.EventError, ev.Kind, "a command stopped by a restore ends with an error, not an exit: %v", ev)
	require.ErrorIs(t, ev.Err, &paddock.UnavailableError{Detail: paddock.DetailCheckpointRestored}, "it says why")
	requireCheckpointed(t, s, h, files, extra)

	_, ok = listed(t, s, h, id)
	require.True(t, ok, "a restored checkpoint stays listed")
	// An unknown checkpoint is not_found, or restore_failed where the
	// provider answers it only as a failed restore (Sprites).
	err = paddock.RestoreCheckpoint(ctx, s.a, h, "paddock-conformance-absent")
	require.True(t, errors.Is(err, paddock.ErrNotFound) || paddock.KindOf(err) == paddock.KindRestoreFailed, "an unknown checkpoint: %v", err)
}

// 37. A fork is a new sandbox holding the checkpoint's files; writes to it
// do not reach the original, which is untouched; its name, once taken, is
// already_exists; an unknown checkpoint is not_found. A deleted
// checkpoint is gone from the listing, and deleting it again is success.
func forkIsItsOwn(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	files := writeCheckpointed(t, s, h)
	id, err := paddock.CreateCheckpoint(ctx, s.a, h, paddock.CheckpointOpts{Comment: "conformance 37"})
	require.NoError(t, err)
	require.NoError(t, s.a.WriteFile(ctx, h, checkpointDir+"/original-only", 0o644, bytes.NewReader([]byte("after\n"))))

	name := s.name()
	fork, err := paddock.Fork(ctx, s.a, h, id, name, paddock.ForkOpts{})
	require.NoError(t, err)
	s.destroyAtEnd(t, fork)
	require.Equal(t, name, fork.Name)
	require.Equal(t, s.a.Provider(), fork.Provider)
	requireCheckpointed(t, s, fork, files, checkpointDir+"/original-only")

	require.NoError(t, s.a.WriteFile(ctx, fork, files[0].path, 0o644, bytes.NewReader([]byte("fork's\n"))))
	require.NoError(t, s.a.WriteFile(ctx, fork, checkpointDir+"/fork-only", 0o644, bytes.NewReader([]byte("fork\n"))))
	require.Equal(t, files[0].data, readAll(t, s, h, files[0].path), "the original is untouched")
	_, err = s.a.ReadFile(ctx, h, checkpointDir+"/fork-only")
	requireKind(t, err, paddock.ErrNotFound, "a fork's write does not reach the original")
	res, err := s.a.Exec(ctx, fork, s.cfg.Fixtures.ExecOK.Cmd, paddock.ExecOpts{})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "the fork runs commands")

	_, err = paddock.Fork(ctx, s.a, h, id, name, paddock.ForkOpts{})
	requireKind(t, err, paddock.ErrAlreadyExists, "a taken name")
	_, err = paddock.Fork(ctx, s.a, h, "paddock-conformance-absent", s.name(), paddock.ForkOpts{})
	requireKind(t, err, paddock.ErrNotFound, "an unknown checkpoint")

	if err := paddock.DeleteCheckpoint(ctx, s.a, h, id); !errors.Is(err, paddock.ErrNotSupported) {
		require.NoError(t, err)
		_, ok := listed(t, s, h, id)
		require.False(t, ok, "a deleted checkpoint is not listed")
		require.NoError(t, paddock.DeleteCheckpoint(ctx, s.a, h, id), "deleting it again is success")
	}
}

// 37 refused. Without fork, Fork is not supported.
func forkRefused(t testing.TB, s *suite) {
	h := s.fresh(t)
	_, err := paddock.Fork(s.ctx(t), s.a, h, "cp-1", s.name(), paddock.ForkOpts{})
	requireKind(t, err, paddock.ErrNotSupported)
}
