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
	require.NoError(t, s.a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{}}))
	require.NoError(t, s.a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{"api.example.com"}}))
}

// 19 refused. Without network_policy a policy is refused, never silently
// dropped.
func policyRefused(t testing.TB, s *suite) {
	h := s.fresh(t)
	err := s.a.ApplyNetworkPolicy(s.ctx(t), h, paddock.NetworkPolicy{Allow: []string{}})
	requireKind(t, err, paddock.ErrNotSupported)
}

// 20. With checkpoint, a checkpoint is created (and listed, where the
// adapter lists) and restored.
func checkpointWorks(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	id, err := s.a.CreateCheckpoint(ctx, h, paddock.CheckpointOpts{Comment: "conformance"})
	require.NoError(t, err)
	require.NotEmpty(t, id)
	if _, ok := s.a.(paddock.CheckpointLister); ok {
		cps, err := paddock.ListCheckpoints(ctx, s.a, h)
		require.NoError(t, err)
		ids := make([]string, len(cps))
		for i, c := range cps {
			ids[i] = c.ID
		}
		require.Contains(t, ids, id)
	}
	require.NoError(t, s.a.RestoreCheckpoint(ctx, h, id))
}

// 20 refused. Without checkpoint both operations are not supported.
func checkpointRefused(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	_, err := s.a.CreateCheckpoint(ctx, h, paddock.CheckpointOpts{})
	requireKind(t, err, paddock.ErrNotSupported, "CreateCheckpoint")
	requireKind(t, s.a.RestoreCheckpoint(ctx, h, "cp-1"), paddock.ErrNotSupported, "RestoreCheckpoint")
}
