package e2b_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/adapters/internal/snapshots/snapshotstest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leaseOf is the lease a reap would judge the sandbox called name by.
func leaseOf(t *testing.T, a *e2b.Adapter, name string) paddock.Lease {
	t.Helper()
	facts, err := a.SandboxFacts(ctx)
	require.NoError(t, err)
	for _, f := range facts {
		if f.Name == name {
			return f.Lease
		}
	}
	t.Fatalf("no sandbox called %s", name)
	return paddock.Lease{}
}

// policyOf is the allow list of the network policy E2B holds for id.
func policyOf(t *testing.T, srv *e2btest.Server, id string) []string {
	t.Helper()
	var p struct {
		AllowOut []string `json:"allowOut"`
	}
	require.NoError(t, json.Unmarshal([]byte(srv.Network(id)), &p))
	return p.AllowOut
}

// A restore replaces the sandbox with one made from the snapshot: the
// files of the checkpoint, the same name, the lease renewed since and the
// network policy; the old sandbox is gone.
func TestRestoreCarriesTheLeaseAndThePolicy(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{Lease: paddock.Lease{Owner: "first", Until: time.Now().Add(time.Hour)}})
	require.NoError(t, err)
	require.NoError(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{"pkg.test"}}))
	require.NoError(t, a.WriteFile(ctx, h, "/tmp/state", 0o644, bytes.NewReader([]byte("one"))))
	cp, err := paddock.CreateCheckpoint(ctx, a, h, paddock.CheckpointOpts{})
	require.NoError(t, err)
	renewed := paddock.Lease{Owner: "second", Until: time.Now().Add(2 * time.Hour).Truncate(time.Second)}
	require.NoError(t, a.RenewLeases(ctx, []string{"box"}, renewed))
	require.NoError(t, a.WriteFile(ctx, h, "/tmp/state", 0o644, bytes.NewReader([]byte("two"))))
	before, err := a.Get(ctx, h)
	require.NoError(t, err)

	require.NoError(t, paddock.RestoreCheckpoint(ctx, a, h, cp))
	after, err := a.Get(ctx, h)
	require.NoError(t, err)
	assert.NotEqual(t, before.ID, after.ID, "a new sandbox holds the checkpoint")
	assert.Equal(t, []string{after.ID}, srv.Sandboxes(), "the old one is gone")
	assert.Equal(t, "one", adaptertest.Content(t, a, h, "/tmp/state"))
	assert.Equal(t, []string{"pkg.test"}, policyOf(t, srv, after.ID), "the policy is carried over")
	got := leaseOf(t, a, "box")
	assert.Equal(t, renewed.Owner, got.Owner, "the lease renewed since the checkpoint, not the checkpoint's")
	assert.True(t, renewed.Until.Equal(got.Until))
}

// A restore that cannot make the new sandbox is restore_failed and
// changes nothing.
func TestAFailedRestoreChangesNothing(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	cp, err := paddock.CreateCheckpoint(ctx, a, h, paddock.CheckpointOpts{})
	require.NoError(t, err)
	require.NoError(t, a.WriteFile(ctx, h, "/tmp/state", 0o644, bytes.NewReader([]byte("since"))))
	before, err := a.Get(ctx, h)
	require.NoError(t, err)

	srv.Fail("POST /sandboxes", e2btest.Fault{Status: http.StatusInternalServerError})
	err = paddock.RestoreCheckpoint(ctx, a, h, cp)
	require.Equal(t, paddock.KindRestoreFailed, paddock.KindOf(err), "%v", err)
	after, err := a.Get(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, before.ID, after.ID)
	assert.Equal(t, "since", adaptertest.Content(t, a, h, "/tmp/state"))
}

// A fork has the lease it is given (none: the file the snapshot copied is
// dropped) and the source's policy.
func TestForkHasItsOwnLease(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	require.NoError(t, a.RenewLeases(ctx, []string{"box"}, paddock.Lease{Owner: "source", Until: time.Now().Add(time.Hour)}))
	require.NoError(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{"pkg.test"}}))
	cp, err := paddock.CreateCheckpoint(ctx, a, h, paddock.CheckpointOpts{})
	require.NoError(t, err)

	for _, tc := range []struct {
		name  string
		lease paddock.Lease
	}{
		{"leased", paddock.Lease{Owner: "fork", Until: time.Now().Add(time.Hour).Truncate(time.Second)}},
		{"unleased", paddock.Lease{}},
	} {
		fork, err := paddock.Fork(ctx, a, h, cp, tc.name, paddock.ForkOpts{Lease: tc.lease})
		require.NoError(t, err, tc.name)
		got := leaseOf(t, a, tc.name)
		assert.Equal(t, tc.lease.Owner, got.Owner, tc.name)
		assert.True(t, tc.lease.Until.Equal(got.Until), tc.name)
		info, err := a.Get(ctx, fork)
		require.NoError(t, err)
		assert.Equal(t, []string{"pkg.test"}, policyOf(t, srv, info.ID), tc.name)
	}
	assert.Equal(t, "source", leaseOf(t, a, "box").Owner, "the source keeps its own")
}

// One sandbox's checkpoint is never another's.
func TestACheckpointIsItsSandboxs(t *testing.T) {
	t.Parallel()
	snapshotstest.EachSandboxsOwn(t, newAdapter(t, e2btest.NewServer(t)), true)
}

// The count is bounded; the checkpoints of a sandbox gone are reaped.
func TestCheckpointsAreBoundedAndReaped(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	snapshotstest.BoundedAndReaped(t, func(limits paddock.CheckpointLimits) paddock.Adapter {
		return newAdapter(t, srv, func(c *e2b.Config) { c.Checkpoints = limits })
	})
}

// A paused sandbox is restored with its network policy too (E2B answers
// a paused sandbox's configuration), and keeps the lease the snapshot
// holds (a paused sandbox's own cannot be read).
func TestRestoringAPausedSandboxKeepsItsPolicy(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	require.NoError(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{"pkg.test"}}))
	require.NoError(t, a.RenewLeases(ctx, []string{"box"}, paddock.Lease{Owner: "kept", Until: time.Now().Add(time.Hour)}))
	cp, err := paddock.CreateCheckpoint(ctx, a, h, paddock.CheckpointOpts{})
	require.NoError(t, err)
	require.NoError(t, a.Suspend(ctx, h))

	require.NoError(t, paddock.RestoreCheckpoint(ctx, a, h, cp))
	info, err := a.Get(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, []string{"pkg.test"}, policyOf(t, srv, info.ID), "the policy is carried over")
	assert.Equal(t, "kept", leaseOf(t, a, "box").Owner, "the snapshot's lease file stays")
}
