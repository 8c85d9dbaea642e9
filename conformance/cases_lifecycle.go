package conformance

import (
	"errors"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/require"
)

// 4. CreateNew never adopts, and after a destroy makes a new incarnation.
// The gate is read when the case runs.
func createNewRefusesAdoption(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	name := s.name()
	if !paddock.Supports(s.a, paddock.CapCreateNew) {
		h, err := paddock.CreateNew(ctx, s.a, name, paddock.CreateNewOpts{})
		if err == nil {
			s.destroyAtEnd(t, h)
		}
		requireKind(t, err, paddock.ErrNotSupported, "CreateNew without create_new advertised")
		return
	}
	first, err := paddock.CreateNew(ctx, s.a, name, paddock.CreateNewOpts{})
	require.NoError(t, err)
	s.destroyAtEnd(t, first)
	require.NotEmpty(t, first.InstanceID, "CreateNew carries an instance id")

	_, err = paddock.CreateNew(ctx, s.a, name, paddock.CreateNewOpts{})
	require.Error(t, err, "a second CreateNew of one name must not adopt")
	require.True(t, errors.Is(err, paddock.ErrAlreadyExists) || errors.Is(err, paddock.ErrInvalid),
		"a duplicate is already_exists or invalid, got %v", err)

	require.NoError(t, s.a.Destroy(ctx, first))
	third, err := paddock.CreateNew(ctx, s.a, name, paddock.CreateNewOpts{})
	require.NoError(t, err)
	require.NotEqual(t, first.InstanceID, third.InstanceID, "a new incarnation has a new instance id")
	require.NoError(t, s.a.Destroy(ctx, third))
}

// 5. Create twice adopts; Get answers the sandbox's name and a status.
func createAdopts(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	name := s.name()
	first, err := s.a.Create(ctx, name, paddock.CreateOpts{})
	require.NoError(t, err)
	s.destroyAtEnd(t, first)
	second, err := s.a.Create(ctx, name, paddock.CreateOpts{})
	require.NoError(t, err, "Create of an existing name adopts it")
	require.Equal(t, first.Name, second.Name)
	info, err := s.a.Get(ctx, first)
	require.NoError(t, err)
	require.Equal(t, name, info.Name, "Get reports the sandbox's name")
	requireStatus(t, info.Status)
}

func requireStatus(t testing.TB, st paddock.Status) {
	t.Helper()
	require.Contains(t, []paddock.Status{paddock.StatusRunning, paddock.StatusSuspended, paddock.StatusUnknown}, st)
}

// 6. Get of a name never created is exactly not_found.
func getNeverCreated(t testing.TB, s *suite) {
	_, err := s.a.Get(s.ctx(t), s.a.BuildHandle(s.name()))
	requireKind(t, err, paddock.ErrNotFound)
}

// 7. Destroy of an absent sandbox is ok; after Destroy, Get is not_found.
func destroyIsDefinitive(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	require.NoError(t, s.a.Destroy(ctx, s.a.BuildHandle(s.name())), "Destroy tolerates absence")
	h := s.fresh(t)
	require.NoError(t, s.a.Destroy(ctx, h))
	_, err := s.a.Get(ctx, h)
	requireKind(t, err, paddock.ErrNotFound, "Get after Destroy")
}

// 8. ListAllNames contains a fresh sandbox.
func listAllNames(t testing.TB, s *suite) {
	h := s.fresh(t)
	names, err := s.a.ListAllNames(s.ctx(t))
	require.NoError(t, err)
	require.Contains(t, names, h.Name)
}

// 9. Suspend and Resume succeed, and Get works on the resumed handle.
func suspendResume(t testing.TB, s *suite) {
	ctx := s.ctx(t)
	h := s.fresh(t)
	require.NoError(t, s.a.Suspend(ctx, h))
	h2, err := s.a.Resume(ctx, h)
	require.NoError(t, err)
	info, err := s.a.Get(ctx, h2)
	require.NoError(t, err)
	requireStatus(t, info.Status)
}
