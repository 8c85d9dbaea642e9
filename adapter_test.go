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
		"apply_network_policy": func(ctx context.Context, a paddock.Adapter) error {
			return paddock.ApplyNetworkPolicy(ctx, a, h, paddock.NetworkPolicy{})
		},
		"public_url": func(ctx context.Context, a paddock.Adapter) error {
			_, err := paddock.PublicURL(ctx, a, h)
			return err
		},
		"create_checkpoint": func(ctx context.Context, a paddock.Adapter) error {
			_, err := paddock.CreateCheckpoint(ctx, a, h, paddock.CheckpointOpts{})
			return err
		},
		"restore_checkpoint": func(ctx context.Context, a paddock.Adapter) error {
			return paddock.RestoreCheckpoint(ctx, a, h, "cp-1")
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

// refusal is a helper's answer when the operation is not offered: public
// URLs answer ErrNoPublicURL (outside the taxonomy), the rest
// ErrNotSupported.
func refusal(name string) error {
	if name == "public_url" {
		return paddock.ErrNoPublicURL
	}
	return paddock.ErrNotSupported
}

func TestOptionalOperationsNeverFallBack(t *testing.T) {
	t.Parallel()
	for name, call := range optionalCalls() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The method is missing even though every capability is advertised.
			stub := &stubAdapter{caps: allCaps}
			require.ErrorIs(t, call(context.Background(), stub), refusal(name))
			assert.Empty(t, stub.calls, "no required operation is called instead")

			full := &fullAdapter{stubAdapter{caps: allCaps}}
			require.NoError(t, call(context.Background(), full))
			assert.Equal(t, []string{name}, full.calls)
		})
	}
}

func TestCapabilityGatedOptionalOperations(t *testing.T) {
	t.Parallel()
	tests := map[string]paddock.Capability{
		"terminate:graceful":   paddock.CapTerminateSession,
		"terminate:force":      paddock.CapForceTerminateSession,
		"expose":               paddock.CapExpose,
		"revoke":               paddock.CapExpose,
		"apply_network_policy": paddock.CapNetworkPolicy,
		"public_url":           paddock.CapPublicURL,
		"create_checkpoint":    paddock.CapCheckpoint,
		"restore_checkpoint":   paddock.CapCheckpoint,
		"list_checkpoints":     paddock.CapCheckpoint,
	}
	for name, capability := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			full := &fullAdapter{stubAdapter{caps: allCaps.Without(capability)}}
			require.ErrorIs(t, optionalCalls()[name](context.Background(), full), refusal(name))
			assert.Empty(t, full.calls, "the adapter is not called without %s", capability)
		})
	}
}

func TestTerminateSessionCheckOrder(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	require.ErrorIs(t, paddock.ApplyNetworkPolicy(ctx, none, h, paddock.NetworkPolicy{Allow: []string{"http://x"}}), paddock.ErrInvalid,
		"a bad policy is invalid before the capability is looked at")
}

func TestHostPath(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "/work/x", paddock.HostPath(&stubAdapter{}, h, "/work/x"), "identity without the hook")
	assert.Equal(t, "/host/work/x", paddock.HostPath(&fullAdapter{}, h, "/work/x"))
}

func TestRequiredOperationChecks(t *testing.T) {
	t.Parallel()
	none := &stubAdapter{}
	all := &stubAdapter{caps: allCaps}
	sh := paddock.NewCmd("sh", "-c", "true")
	tests := map[string]struct {
		err  error
		want error
	}{
		"spawn plain":                {paddock.ValidateSpawn(none, sh, paddock.SpawnOpts{Stdin: true}), nil},
		"spawn tty without cap":      {paddock.ValidateSpawn(none, sh, paddock.SpawnOpts{TTY: true}), paddock.ErrNotSupported},
		"spawn tty with cap":         {paddock.ValidateSpawn(all, sh, paddock.SpawnOpts{TTY: true}), nil},
		"spawn name without cap":     {paddock.ValidateSpawn(none, sh, paddock.SpawnOpts{Name: "dev"}), paddock.ErrNotSupported},
		"spawn name with cap":        {paddock.ValidateSpawn(all, sh, paddock.SpawnOpts{Name: "dev"}), nil},
		"spawn bad name before gate": {paddock.ValidateSpawn(none, sh, paddock.SpawnOpts{Name: "a/b"}), paddock.ErrInvalid},
		"spawn bad cmd":              {paddock.ValidateSpawn(all, paddock.Cmd{}, paddock.SpawnOpts{}), paddock.ErrInvalid},
		"exec ok":                    {paddock.ValidateExec(sh, paddock.ExecOpts{}), nil},
		"exec bad cmd":               {paddock.ValidateExec(paddock.Cmd{}, paddock.ExecOpts{}), paddock.ErrInvalid},
		"exec negative timeout":      {paddock.ValidateExec(sh, paddock.ExecOpts{Timeout: paddock.Duration(-1)}), paddock.ErrInvalid},
		"sessions without attach":    {paddock.Require(none, paddock.CapAttach), paddock.ErrNotSupported},
		"sessions with attach":       {paddock.Require(all, paddock.CapAttach), nil},
		"attach without cap":         {paddock.ValidateAttach(none, "s-1"), paddock.ErrNotSupported},
		"attach bad id":              {paddock.ValidateAttach(all, "../x"), paddock.ErrInvalid},
		"attach ok":                  {paddock.ValidateAttach(all, "s-1"), nil},
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
