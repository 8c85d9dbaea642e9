package daytona_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/daytona"
	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/paddockhq/paddock/adapters/internal/adaptertest"
	"github.com/paddockhq/paddock/adapters/internal/snapshots/snapshotstest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A restore replaces the sandbox with one made from the snapshot under
// the same name: the checkpoint's files, the labels (so the lease renewed
// since), the environment and the network settings; the snapshot taken
// for safety is gone once it worked.
func TestRestoreCarriesTheSandboxsSettings(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{Params: map[string]string{"env.GREETING": "hi"}})
	require.NoError(t, err)
	require.NoError(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{"pkg.test"}}))
	greeting := func() string {
		res, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", "echo $GREETING"), paddock.ExecOpts{})
		require.NoError(t, err)
		return string(res.Stdout)
	}
	require.Equal(t, "hi\n", greeting(), "the create's environment reaches commands, as Daytona gives it the container")
	require.NoError(t, a.WriteFile(ctx, h, "/tmp/state", 0o644, bytes.NewReader([]byte("one"))))
	cp, err := paddock.CreateCheckpoint(ctx, a, h, paddock.CheckpointOpts{})
	require.NoError(t, err)
	lease := paddock.Lease{Owner: "renewed", Until: time.Now().Add(time.Hour)}
	require.NoError(t, a.RenewLeases(ctx, []string{"box"}, lease))
	require.NoError(t, a.WriteFile(ctx, h, "/tmp/state", 0o644, bytes.NewReader([]byte("two"))))
	before := srv.ID("box")
	labels := srv.Labels("box")

	require.NoError(t, paddock.RestoreCheckpoint(ctx, a, h, cp))
	assert.NotEqual(t, before, srv.ID("box"), "a new sandbox holds the checkpoint")
	assert.Equal(t, []string{"box"}, srv.Sandboxes(), "the old one is gone")
	assert.Equal(t, "one", adaptertest.Content(t, a, h, "/tmp/state"))
	assert.Equal(t, labels, srv.Labels("box"), "the labels, the lease renewed since among them")
	blockAll, _, domains := srv.Network("box")
	assert.False(t, blockAll)
	assert.Equal(t, "pkg.test", domains, "the network settings")
	assert.Equal(t, "hi\n", greeting(), "the environment")
	cps, err := paddock.ListCheckpoints(ctx, a, h)
	require.NoError(t, err)
	require.Len(t, cps, 1, "the snapshot taken for safety is deleted")
	assert.Equal(t, cp, cps[0].ID)
	assert.False(t, cps[0].Memory, "Daytona's snapshots of Linux sandboxes hold files only")
}

// A restore whose new sandbox cannot be made is restore_failed, and the
// sandbox is made again as it was before.
func TestAFailedRestoreLeavesTheSandboxAsItWas(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{})
	require.NoError(t, err)
	cp, err := paddock.CreateCheckpoint(ctx, a, h, paddock.CheckpointOpts{})
	require.NoError(t, err)
	require.NoError(t, a.WriteFile(ctx, h, "/tmp/state", 0o644, bytes.NewReader([]byte("since"))))

	srv.Fail(createRoute, daytonatest.Body(http.StatusBadRequest, `{"statusCode":400,"message":"No available runners"}`))
	err = paddock.RestoreCheckpoint(ctx, a, h, cp)
	require.Equal(t, paddock.KindRestoreFailed, paddock.KindOf(err), "%v", err)
	assert.Contains(t, err.Error(), "made again as it was")
	assert.Equal(t, "since", adaptertest.Content(t, a, h, "/tmp/state"), "the files as they were")
	cps, err := paddock.ListCheckpoints(ctx, a, h)
	require.NoError(t, err)
	assert.Len(t, cps, 1, "the snapshot taken for safety is deleted")
}

// A fork has its own lease and the source's settings; the source keeps
// its own.
func TestForkHasItsOwnLease(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	a := newAdapter(t, srv)
	h, err := a.Create(ctx, "box", paddock.CreateOpts{Lease: paddock.Lease{Owner: "source", Until: time.Now().Add(time.Hour)}})
	require.NoError(t, err)
	require.NoError(t, a.ApplyNetworkPolicy(ctx, h, paddock.NetworkPolicy{Allow: []string{"pkg.test"}}))
	cp, err := paddock.CreateCheckpoint(ctx, a, h, paddock.CheckpointOpts{})
	require.NoError(t, err)
	source := srv.Labels("box")

	_, err = paddock.Fork(ctx, a, h, cp, "fork", paddock.ForkOpts{Lease: paddock.Lease{Owner: "fork", Until: time.Now().Add(time.Hour)}})
	require.NoError(t, err)
	assert.NotEqual(t, source, srv.Labels("fork"), "its own lease")
	facts, err := a.SandboxFacts(ctx)
	require.NoError(t, err)
	owners := map[string]string{}
	for _, f := range facts {
		owners[f.Name] = f.Lease.Owner
	}
	assert.Equal(t, map[string]string{"box": "source", "fork": "fork"}, owners)
	_, _, domains := srv.Network("fork")
	assert.Equal(t, "pkg.test", domains, "the source's network settings")
}

// One sandbox's checkpoint is never another's.
func TestACheckpointIsItsSandboxs(t *testing.T) {
	t.Parallel()
	snapshotstest.EachSandboxsOwn(t, newAdapter(t, daytonatest.NewServer(t)), false)
}

// The count is bounded; the checkpoints of a sandbox gone are reaped.
func TestCheckpointsAreBoundedAndReaped(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t)
	snapshotstest.BoundedAndReaped(t, func(limits paddock.CheckpointLimits) paddock.Adapter {
		return newAdapter(t, srv, func(c *daytona.Config) { c.Checkpoints = limits })
	})
}
