package conformance

import (
	"strconv"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

// 25. DestroyOnce succeeds only on confirmed absence: a sandbox is gone
// after it, and an absent one is confirmed absent. Bad options are invalid
// before anything is touched. The gate is read when the case runs.
func destroyOnceConfirmsAbsence(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	err := paddock.DestroyOnce(ctx, s.a, h, paddock.DestroyOnceOpts{Timeout: paddock.Duration(0)})
	requireKind(t, err, paddock.ErrInvalid, "a zero timeout is invalid, whatever the adapter offers")
	if !paddock.Supports(s.a, paddock.CapDestroyOnce) {
		requireKind(t, paddock.DestroyOnce(ctx, s.a, h, paddock.DestroyOnceOpts{}), paddock.ErrNotSupported,
			"DestroyOnce without destroy_once advertised")
		_, err := s.a.Get(ctx, h)
		require.NoError(t, err, "and the sandbox is untouched")
		return
	}
	require.NoError(t, paddock.DestroyOnce(ctx, s.a, h, paddock.DestroyOnceOpts{}))
	_, err = s.a.Get(ctx, h)
	requireKind(t, err, paddock.ErrNotFound, "gone after DestroyOnce")
	require.NoError(t, paddock.DestroyOnce(ctx, s.a, h, paddock.DestroyOnceOpts{}), "an absent sandbox is confirmed absent")
}

// 26. CreateCheckpointOnce makes one checkpoint the listing shows; without
// create_checkpoint_once it is not supported. A bad operation id is invalid
// first either way.
func checkpointOnceIsListed(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	_, err := paddock.CreateCheckpointOnce(ctx, s.a, h, paddock.CheckpointOnceOpts{OperationID: "not valid"})
	requireKind(t, err, paddock.ErrInvalid, "a bad operation id is invalid, whatever the adapter offers")
	// A fresh operation id: hosts never reuse one.
	opts := paddock.CheckpointOnceOpts{OperationID: "conformance-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	if !paddock.Supports(s.a, paddock.CapCreateCheckpointOnce) {
		_, err := paddock.CreateCheckpointOnce(ctx, s.a, h, opts)
		requireKind(t, err, paddock.ErrNotSupported, "CreateCheckpointOnce without create_checkpoint_once advertised")
		return
	}
	id, err := paddock.CreateCheckpointOnce(ctx, s.a, h, opts)
	require.NoError(t, err)
	require.NotEmpty(t, id)
	cps, err := paddock.ListCheckpoints(ctx, s.a, h)
	require.NoError(t, err)
	var comment string
	for _, c := range cps {
		if c.ID == id {
			comment = c.Comment
		}
	}
	require.Equal(t, paddock.CheckpointComment(opts.OperationID), comment, "the checkpoint is listed with its operation's comment")
}
