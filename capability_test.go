package paddock_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCapabilitySet(t *testing.T) {
	t.Parallel()
	assert.Len(t, paddock.AllCapabilities(), 18, "the contract's eleven plus expose, named_spawn, files, signal, resize, watch and fork")
	for _, c := range paddock.AllCapabilities() {
		assert.True(t, c.Known(), c)
	}
	assert.False(t, paddock.Capability("teleport").Known())

	s := paddock.NewCapabilitySet(paddock.CapAttach, paddock.CapSuspend, paddock.CapAttach)
	assert.Equal(t, 2, s.Len())
	assert.True(t, s.Has(paddock.CapAttach))
	assert.False(t, s.Has(paddock.CapTTY))
	assert.Equal(t, []paddock.Capability{paddock.CapAttach, paddock.CapSuspend}, s.List())
	assert.Equal(t, "{attach, suspend}", s.String())
	require.NoError(t, s.Validate())

	with := s.With(paddock.CapTTY)
	assert.True(t, with.Has(paddock.CapTTY))
	assert.False(t, s.Has(paddock.CapTTY), "With leaves the original unchanged")
	without := with.Without(paddock.CapAttach)
	assert.False(t, without.Has(paddock.CapAttach))
	assert.True(t, with.Has(paddock.CapAttach), "Without leaves the original unchanged")

	var zero paddock.CapabilitySet
	assert.False(t, zero.Has(paddock.CapAttach))
	assert.Equal(t, 0, zero.Len())

	bad := paddock.NewCapabilitySet(paddock.CapAttach, "teleport")
	require.ErrorIs(t, bad.Validate(), paddock.ErrInvalid)
	assert.Contains(t, bad.Validate().Error(), "teleport")

	js, err := json.Marshal(s)
	require.NoError(t, err)
	assert.JSONEq(t, `["attach","suspend"]`, string(js))
	var back paddock.CapabilitySet
	require.NoError(t, json.Unmarshal(js, &back))
	assert.Equal(t, s.List(), back.List())
}

func TestSupportsRereadsCapabilities(t *testing.T) {
	t.Parallel()
	a := &stubAdapter{}
	assert.False(t, paddock.Supports(a, paddock.CapCheckpoint))
	a.caps = paddock.NewCapabilitySet(paddock.CapCheckpoint) // configuration changed
	assert.True(t, paddock.Supports(a, paddock.CapCheckpoint))
	assert.False(t, paddock.Supports(nil, paddock.CapCheckpoint))
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	a := &stubAdapter{caps: paddock.NewCapabilitySet(paddock.CapAttach)}
	r := paddock.Registry{"sprites": a, "e2b": a}

	got, err := r.Lookup("sprites")
	require.NoError(t, err)
	assert.Same(t, a, got)

	_, err = r.Lookup("nope")
	var up *paddock.UnknownProviderError
	require.True(t, errors.As(err, &up))
	assert.Equal(t, paddock.Provider("nope"), up.Provider)
	assert.Equal(t, []paddock.Provider{"e2b", "sprites"}, up.Configured)
	assert.Contains(t, err.Error(), `"nope"`)
	assert.Contains(t, err.Error(), "e2b, sprites")
	assert.False(t, paddock.IsTransient(err))

	ok, err := r.Supports("e2b", paddock.CapAttach)
	require.NoError(t, err)
	assert.True(t, ok)
	_, err = r.Supports("nope", paddock.CapAttach)
	require.ErrorAs(t, err, &up)

	_, err = paddock.Registry{"nil": nil}.Lookup("nil")
	require.ErrorAs(t, err, &up, "a nil adapter is not registered")
}

func TestStatusOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		provider paddock.Provider
		state    string
		want     paddock.Status
	}{
		{"sprites", "running", paddock.StatusRunning},
		{"sprites", "ready", paddock.StatusRunning},
		{"sprites", "active", paddock.StatusRunning},
		{"sprites", "suspended", paddock.StatusSuspended},
		{"sprites", "paused", paddock.StatusSuspended},
		{"sprites", "stopped", paddock.StatusSuspended},
		{"sprites", "cold", paddock.StatusUnknown},
		{"e2b", "running", paddock.StatusRunning},
		{"e2b", "paused", paddock.StatusSuspended},
		{"e2b", "stopped", paddock.StatusUnknown},
		{"daytona", "started", paddock.StatusRunning},
		{"daytona", "starting", paddock.StatusRunning},
		{"daytona", "resuming", paddock.StatusRunning},
		{"daytona", "stopped", paddock.StatusSuspended},
		{"daytona", "stopping", paddock.StatusSuspended},
		{"daytona", "archived", paddock.StatusSuspended},
		{"daytona", "archiving", paddock.StatusSuspended},
		{"daytona", "paused", paddock.StatusSuspended},
		{"daytona", "pausing", paddock.StatusSuspended},
		{"daytona", "error", paddock.StatusUnknown},
		{"daytona", "Started", paddock.StatusUnknown},
		{"local", "running", paddock.StatusUnknown},
	}
	for _, tc := range tests {
		t.Run(string(tc.provider)+"/"+tc.state, func(t *testing.T) {
			assert.Equal(t, tc.want, paddock.StatusOf(tc.provider, tc.state))
		})
	}
}

func TestEventKinds(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "stdout", paddock.EventStdout.String())
	assert.Equal(t, "error", paddock.EventError.String())
	assert.Equal(t, "EventKind(9)", paddock.EventKind(9).String())
	assert.False(t, paddock.Stdout(nil).Kind.Terminal())
	assert.False(t, paddock.Stderr(nil).Kind.Terminal())
	assert.True(t, paddock.Exit(3).Kind.Terminal())
	assert.Equal(t, 3, paddock.Exit(3).Code)
	failed := paddock.Failed(paddock.ErrClosedBeforeExit)
	assert.True(t, failed.Kind.Terminal())
	assert.ErrorIs(t, failed.Err, paddock.ErrClosedBeforeExit)
}
