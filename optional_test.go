package paddock_test

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var allCaps = paddock.NewCapabilitySet(paddock.AllCapabilities()...)

// optionalCall invokes one optional operation through its facade helper.
type optionalCall func(ctx context.Context, a paddock.Adapter) error

var h = paddock.Handle{Provider: "stub", Name: "box"}

func optionalCalls() map[string]optionalCall {
	return map[string]optionalCall{
		"create_new": func(ctx context.Context, a paddock.Adapter) error {
			_, err := paddock.CreateNew(ctx, a, "box", paddock.CreateNewOpts{})
			return err
		},
		"destroy_once": func(ctx context.Context, a paddock.Adapter) error {
			return paddock.DestroyOnce(ctx, a, h, paddock.DestroyOnceOpts{})
		},
		"checkpoint_once": func(ctx context.Context, a paddock.Adapter) error {
			_, err := paddock.CreateCheckpointOnce(ctx, a, h, paddock.CheckpointOnceOpts{OperationID: "op-1"})
			return err
		},
		"list_checkpoints": func(ctx context.Context, a paddock.Adapter) error {
			_, err := paddock.ListCheckpoints(ctx, a, h)
			return err
		},
		"terminate:graceful": func(ctx context.Context, a paddock.Adapter) error {
			return paddock.TerminateSession(ctx, a, h, "s-1", paddock.TerminateOpts{})
		},
		"terminate:force": func(ctx context.Context, a paddock.Adapter) error {
			return paddock.TerminateSession(ctx, a, h, "s-1", paddock.TerminateOpts{Mode: paddock.TerminateForce})
		},
		"expose": func(ctx context.Context, a paddock.Adapter) error {
			_, err := paddock.Expose(ctx, a, h, 8080, paddock.ExposeOpts{})
			return err
		},
		"revoke": func(ctx context.Context, a paddock.Adapter) error {
			return paddock.Revoke(ctx, a, h, paddock.Preview{Port: 8080})
		},
	}
}

func TestOptionalOperationsNeverFallBack(t *testing.T) {
	for name, call := range optionalCalls() {
		t.Run(name, func(t *testing.T) {
			// The method is missing even though every capability is advertised.
			stub := &stubAdapter{caps: allCaps}
			require.ErrorIs(t, call(context.Background(), stub), paddock.ErrNotSupported)
			assert.Empty(t, stub.calls, "no required operation is called instead")

			full := &fullAdapter{stubAdapter{caps: allCaps}}
			require.NoError(t, call(context.Background(), full))
			assert.Equal(t, []string{name}, full.calls)
		})
	}
}

func TestCapabilityGatedOptionalOperations(t *testing.T) {
	tests := map[string]paddock.Capability{
		"terminate:graceful": paddock.CapTerminateSession,
		"terminate:force":    paddock.CapForceTerminateSession,
		"expose":             paddock.CapExpose,
		"revoke":             paddock.CapExpose,
		"list_checkpoints":   paddock.CapCheckpoint,
	}
	for name, capability := range tests {
		t.Run(name, func(t *testing.T) {
			full := &fullAdapter{stubAdapter{caps: allCaps.Without(capability)}}
			require.ErrorIs(t, optionalCalls()[name](context.Background(), full), paddock.ErrNotSupported)
			assert.Empty(t, full.calls, "the adapter is not called without %s", capability)
		})
	}
}

func TestTerminateSessionCheckOrder(t *testing.T) {
	ctx := context.Background()
	none := &stubAdapter{}
	// Validation comes before the capability check: bad input on an adapter
	// that cannot terminate is still invalid.
	err := paddock.TerminateSession(ctx, none, h, "../other", paddock.TerminateOpts{})
	require.ErrorIs(t, err, paddock.ErrTerminationRequest)
	err = paddock.TerminateSession(ctx, none, h, "s-1", paddock.TerminateOpts{Timeout: paddock.Duration(31 * time.Second)})
	require.ErrorIs(t, err, paddock.ErrTerminationRequest)
	// A valid request on it is not supported.
	require.ErrorIs(t, paddock.TerminateSession(ctx, none, h, "s-1", paddock.TerminateOpts{}), paddock.ErrNotSupported)
	// The adapter receives resolved options.
	full := &fullAdapter{stubAdapter{caps: allCaps}}
	require.NoError(t, paddock.TerminateSession(ctx, full, h, "s-1", paddock.TerminateOpts{}))
	assert.Equal(t, []string{"terminate:graceful"}, full.calls)
}

func TestOptionalValidationComesFirst(t *testing.T) {
	ctx := context.Background()
	none := &stubAdapter{}
	_, err := paddock.CreateNew(ctx, none, "box", paddock.CreateNewOpts{Timeout: paddock.Duration(0)})
	require.ErrorIs(t, err, paddock.ErrCreateTimeoutOption)
	_, err = paddock.CreateNew(ctx, none, "", paddock.CreateNewOpts{})
	require.ErrorIs(t, err, paddock.ErrInvalid)
	require.ErrorIs(t, paddock.DestroyOnce(ctx, none, h, paddock.DestroyOnceOpts{Timeout: paddock.Duration(-1)}), paddock.ErrDeleteTimeoutOption)
	_, err = paddock.CreateCheckpointOnce(ctx, none, h, paddock.CheckpointOnceOpts{OperationID: "bad id"})
	require.ErrorIs(t, err, paddock.ErrCheckpointOperationID)
	_, err = paddock.Expose(ctx, none, h, 0, paddock.ExposeOpts{})
	require.ErrorIs(t, err, paddock.ErrInvalid)
}

func TestHostPath(t *testing.T) {
	assert.Equal(t, "/work/x", paddock.HostPath(&stubAdapter{}, h, "/work/x"), "identity without the hook")
	assert.Equal(t, "/host/work/x", paddock.HostPath(&fullAdapter{}, h, "/work/x"))
}

func TestRequiredOperationChecks(t *testing.T) {
	none := &stubAdapter{}
	all := &stubAdapter{caps: allCaps}
	sh := paddock.NewCmd("sh", "-c", "true")
	tests := map[string]struct {
		err  error
		want error
	}{
		"spawn plain":                    {paddock.CheckSpawn(none, sh, paddock.SpawnOpts{Stdin: true}), nil},
		"spawn tty without cap":          {paddock.CheckSpawn(none, sh, paddock.SpawnOpts{TTY: true}), paddock.ErrNotSupported},
		"spawn tty with cap":             {paddock.CheckSpawn(all, sh, paddock.SpawnOpts{TTY: true}), nil},
		"spawn name without cap":         {paddock.CheckSpawn(none, sh, paddock.SpawnOpts{Name: "dev"}), paddock.ErrNotSupported},
		"spawn name with cap":            {paddock.CheckSpawn(all, sh, paddock.SpawnOpts{Name: "dev"}), nil},
		"spawn bad name before gate":     {paddock.CheckSpawn(none, sh, paddock.SpawnOpts{Name: "a/b"}), paddock.ErrInvalid},
		"spawn bad cmd":                  {paddock.CheckSpawn(all, paddock.Cmd{}, paddock.SpawnOpts{}), paddock.ErrInvalid},
		"exec ok":                        {paddock.CheckExec(sh, paddock.ExecOpts{}), nil},
		"exec bad cmd":                   {paddock.CheckExec(paddock.Cmd{}, paddock.ExecOpts{}), paddock.ErrInvalid},
		"exec negative timeout":          {paddock.CheckExec(sh, paddock.ExecOpts{Timeout: paddock.Duration(-1)}), paddock.ErrInvalid},
		"sessions without attach":        {paddock.CheckSessions(none), paddock.ErrNotSupported},
		"sessions with attach":           {paddock.CheckSessions(all), nil},
		"attach without cap":             {paddock.CheckAttach(none, "s-1"), paddock.ErrNotSupported},
		"attach bad id":                  {paddock.CheckAttach(all, "../x"), paddock.ErrInvalid},
		"attach ok":                      {paddock.CheckAttach(all, "s-1"), nil},
		"policy without cap":             {paddock.CheckNetworkPolicy(none, paddock.NetworkPolicy{}), paddock.ErrNotSupported},
		"policy empty allow is accepted": {paddock.CheckNetworkPolicy(all, paddock.NetworkPolicy{}), nil},
		"policy bad entry":               {paddock.CheckNetworkPolicy(all, paddock.NetworkPolicy{Allow: []string{"http://x"}}), paddock.ErrInvalid},
		"checkpoint without cap":         {paddock.CheckCheckpoint(none), paddock.ErrNotSupported},
		"checkpoint with cap":            {paddock.CheckCheckpoint(all), nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if tc.want == nil {
				assert.NoError(t, tc.err)
				return
			}
			assert.ErrorIs(t, tc.err, tc.want)
		})
	}
}
