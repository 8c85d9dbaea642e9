// Package snapshotstest checks what every adapter keeping its checkpoints
// as its provider's snapshots (package snapshots) promises beyond the
// conformance suite: one sandbox's checkpoint is never another's, the
// count is bounded, and those of a sandbox gone are reaped after the
// retention.
package snapshotstest

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// EachSandboxsOwn checks on a that a checkpoint of one sandbox cannot be
// restored or forked from another (not_found), that deleting it through
// another is success and leaves it, and that listings are per sandbox,
// their times read from the names. memory is what a's checkpoints hold.
func EachSandboxsOwn(t *testing.T, a paddock.Adapter, memory bool) {
	t.Helper()
	ctx := context.Background()
	one, err := a.Create(ctx, "one", paddock.CreateOpts{})
	require.NoError(t, err)
	other, err := a.Create(ctx, "other", paddock.CreateOpts{})
	require.NoError(t, err)
	cp, err := paddock.CreateCheckpoint(ctx, a, one, paddock.CheckpointOpts{})
	require.NoError(t, err)

	require.ErrorIs(t, paddock.RestoreCheckpoint(ctx, a, other, cp), paddock.ErrNotFound)
	_, err = paddock.Fork(ctx, a, other, cp, "fork", paddock.ForkOpts{})
	require.ErrorIs(t, err, paddock.ErrNotFound)
	require.NoError(t, paddock.DeleteCheckpoint(ctx, a, other, cp))
	mine, err := paddock.ListCheckpoints(ctx, a, one)
	require.NoError(t, err)
	require.Len(t, mine, 1)
	assert.Equal(t, cp, mine[0].ID)
	assert.Equal(t, memory, mine[0].Memory, "what the checkpoint holds")
	assert.WithinDuration(t, time.Now(), mine[0].CreatedAt, time.Hour, "its time is read from its name")
	theirs, err := paddock.ListCheckpoints(ctx, a, other)
	require.NoError(t, err)
	assert.Empty(t, theirs)
}

// BoundedAndReaped checks on the adapter newAdapter makes with limits
// that the count is bounded, and that the checkpoints of a sandbox gone
// are reaped once found gone for longer than the retention (here, at
// once: the next creation after the one that found them gone).
func BoundedAndReaped(t *testing.T, newAdapter func(paddock.CheckpointLimits) paddock.Adapter) {
	t.Helper()
	ctx := context.Background()
	a := newAdapter(paddock.CheckpointLimits{MaxCount: 2, Retention: time.Nanosecond})
	gone, err := a.Create(ctx, "gone", paddock.CreateOpts{})
	require.NoError(t, err)
	for range 2 {
		_, err := paddock.CreateCheckpoint(ctx, a, gone, paddock.CheckpointOpts{})
		require.NoError(t, err)
	}
	_, err = paddock.CreateCheckpoint(ctx, a, gone, paddock.CheckpointOpts{})
	require.ErrorIs(t, err, &paddock.InvalidError{Detail: paddock.DetailCheckpointLimit})

	require.NoError(t, a.Destroy(ctx, gone))
	kept, err := a.Create(ctx, "kept", paddock.CreateOpts{})
	require.NoError(t, err)
	_, err = paddock.CreateCheckpoint(ctx, a, kept, paddock.CheckpointOpts{})
	require.ErrorIs(t, err, &paddock.InvalidError{Detail: paddock.DetailCheckpointLimit}, "found gone now: kept a retention from now")
	_, err = paddock.CreateCheckpoint(ctx, a, kept, paddock.CheckpointOpts{})
	require.NoError(t, err, "past the retention, the gone sandbox's are reaped")
	left, err := paddock.ListCheckpoints(ctx, a, gone)
	require.NoError(t, err)
	assert.Empty(t, left)
}
