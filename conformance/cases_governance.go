package conformance

import (
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

// 19. An empty allow list (deny all) and a one-domain list are accepted.
func policyAccepted(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	require.NoError(t, paddock.ApplyNetworkPolicy(ctx, s.a, h, paddock.NetworkPolicy{Allow: []string{}}))
	require.NoError(t, paddock.ApplyNetworkPolicy(ctx, s.a, h, paddock.NetworkPolicy{Allow: []string{"api.example.com"}}))
}

// 19 refused. Without network_policy a policy is refused, never silently
// dropped.
func policyRefused(t testing.TB, s *suite) {
	h := s.fresh(t)
	err := paddock.ApplyNetworkPolicy(s.ctx(t), s.a, h, paddock.NetworkPolicy{Allow: []string{}})
	requireKind(t, err, paddock.ErrNotSupported)
}

// 20. With checkpoint, a checkpoint is created, listed and restored.
func checkpointWorks(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	id, err := paddock.CreateCheckpoint(ctx, s.a, h, paddock.CheckpointOpts{Comment: "conformance"})
	require.NoError(t, err)
	require.NotEmpty(t, id)
	cps, err := paddock.ListCheckpoints(ctx, s.a, h)
	require.NoError(t, err)
	ids := make([]string, len(cps))
	for i, c := range cps {
		ids[i] = c.ID
	}
	require.Contains(t, ids, id, "the checkpoint is listed")
	require.NoError(t, paddock.RestoreCheckpoint(ctx, s.a, h, id))
}

// 20 refused. Without checkpoint every checkpoint operation is not
// supported.
func checkpointRefused(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	_, err := paddock.CreateCheckpoint(ctx, s.a, h, paddock.CheckpointOpts{})
	requireKind(t, err, paddock.ErrNotSupported, "CreateCheckpoint")
	requireKind(t, paddock.RestoreCheckpoint(ctx, s.a, h, "cp-1"), paddock.ErrNotSupported, "RestoreCheckpoint")
	_, err = paddock.ListCheckpoints(ctx, s.a, h)
	requireKind(t, err, paddock.ErrNotSupported, "ListCheckpoints")
}
