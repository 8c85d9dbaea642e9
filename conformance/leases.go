package conformance

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Environment of a RunLeases child process.
const (
	leaseChildIdentity = "PADDOCK_LEASE_CHILD_IDENTITY"
	leaseChildNames    = "PADDOCK_LEASE_CHILD_NAMES"
	leaseChildLease    = "PADDOCK_LEASE_CHILD_LEASE"
)

// LeaseSetup describes an adapter to RunLeases.
type LeaseSetup struct {
	// Adapter makes the adapter under test; RunLeases calls it in the
	// test's process and in the child processes it starts (which see
	// ChildEnv in their environment).
	Adapter func(t *testing.T) paddock.Adapter
	// ChildEnv is what a child process needs to reach the same provider
	// (a loopback server's address), as KEY=value.
	ChildEnv []string
	// Foreign makes a sandbox called name outside Paddock, on the same
	// provider, and returns a check that it still exists.
	Foreign func(t *testing.T, name string) (exists func() bool)
	// Lease is the runtimes' lease; 0 = 40s: renewals every 13 s, each
	// allowed 20 s, so a loaded machine's slow calls (CI's load cases beside
	// it) do not lapse a live runtime's lease.
	Lease time.Duration
}

// RunLeases proves, with real processes, that no sandbox outlives its
// owner (docs/contract.md#leases): runtimes in two child processes create
// sandboxes and are killed with SIGKILL; a runtime started with the
// identity of the second adopts its sandboxes; a third runtime's Reap, in
// a dry run first (which must change nothing), destroys exactly the first
// child's sandboxes, only after their lease, and leaves alone a sandbox
// made outside Paddock, one held by a live runtime and the adopted ones.
//
// The test that calls it runs again in each child (its name selects it):
// call RunLeases before anything the child must not do.
func RunLeases(t *testing.T, s LeaseSetup) {
	if os.Getenv(leaseChildIdentity) != "" {
		leaseChild(t, s)
		return
	}
	s.Lease = cmp.Or(s.Lease, 40*time.Second)
	run := randomSuffix()
	a := s.Adapter(t)
	p := a.Provider()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	dead := []string{"lease-" + run + "-dead-1", "lease-" + run + "-dead-2"}
	heir := []string{"lease-" + run + "-heir-1"}
	live, foreign := "lease-"+run+"-live", "lease-"+run+"-foreign"
	killedAt := leaseChildKilled(t, s, "dead-"+run, dead)
	leaseChildKilled(t, s, "heir-"+run, heir)

	exists := s.Foreign(t, foreign)
	t.Cleanup(func() { _ = a.Destroy(context.Background(), a.BuildHandle(foreign)) })
	start := func(identity string) *actors.Runtime {
		rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{p: a}, Name: identity, Identity: identity, Lease: s.Lease, ReapInterval: -1,
			Logger: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)}) // failed renewals, in the test's log

		require.NoError(t, err)
		t.Cleanup(func() {
			sctx, scancel := context.WithTimeout(context.Background(), time.Minute)
			defer scancel()
			assert.NoError(t, rt.Shutdown(sctx))
		})
		return rt
	}
	owner := start("live-" + run)
	_, err := owner.Adapter(p).Create(ctx, live, paddock.CreateOpts{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Destroy(context.Background(), a.BuildHandle(live)) })
	heirRT := start("heir-" + run)
	require.Eventually(t, func() bool { return slices.Equal(heirRT.Held(p), heir) }, time.Minute, 20*time.Millisecond,
		"a runtime with the crashed one's identity adopts its sandboxes")
	reaper := start("reaper-" + run)

	ours := append(append(append([]string{}, dead...), heir...), live, foreign)
	mine := func(names []string) []string {
		var out []string
		for _, n := range names {
			if slices.Contains(ours, n) {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	dryRun := func() paddock.ReapReport {
		reports, err := reaper.Reap(ctx, paddock.ReapOpts{DryRun: true})
		require.NoError(t, err)
		r := reports[p]
		require.True(t, r.DryRun)
		return r
	}

	// The dead owner's lease runs a whole lease from its last renewal,
	// which was at most a third of a lease before the kill.
	early := dryRun()
	if time.Since(killedAt) < s.Lease/2 {
		assert.Empty(t, mine(early.Orphaned), "nothing is an orphan before its lease lapses")
	}
	var report paddock.ReapReport
	require.Eventually(t, func() bool {
		report = dryRun()
		return len(mine(report.Orphaned)) >= len(dead)
	}, 2*time.Minute, 100*time.Millisecond, "the dead owner's lease lapses")
	assert.Equal(t, dead, mine(report.Orphaned), "the dry run reports exactly the dead owner's sandboxes")
	assert.Empty(t, mine(report.Destroyed), "nothing of this test is too old")
	assert.Empty(t, mine(report.Stopped), "nothing of this test is idle")
	for _, n := range ours {
		if n != foreign {
			_, err := a.Get(ctx, a.BuildHandle(n))
			require.NoError(t, err, "the dry run changed nothing: %s is still there", n)
		}
	}

	reports, err := reaper.Reap(ctx, paddock.ReapOpts{})
	require.NoError(t, err)
	assert.False(t, reports[p].DryRun)
	assert.Equal(t, dead, mine(reports[p].Orphaned), "the reap destroys exactly the dead owner's sandboxes")
	for _, n := range dead {
		_, err := a.Get(ctx, a.BuildHandle(n))
		assert.ErrorIs(t, err, paddock.ErrNotFound, "%s was reaped", n)
	}
	for _, n := range append([]string{live}, heir...) {
		_, err := a.Get(ctx, a.BuildHandle(n))
		assert.NoError(t, err, "%s is held by a live runtime", n)
		t.Cleanup(func() { _ = a.Destroy(context.Background(), a.BuildHandle(n)) })
	}
	assert.True(t, exists(), "the sandbox made outside Paddock is untouched")
}

// leaseChildKilled runs a runtime called identity in a child process,
// which creates names and is then killed with SIGKILL; it returns when
// the child is gone, and the time of the kill.
func leaseChildKilled(t *testing.T, s LeaseSetup, identity string, names []string) time.Time {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+strings.ReplaceAll(t.Name(), "/", "$/^")+"$", "-test.count=1", "-test.timeout=5m")
	// The child's temporary files go under this test's own directory: a
	// process killed with SIGKILL removes none of its own.
	cmd.Env = append(append(os.Environ(), s.ChildEnv...), "TMPDIR="+t.TempDir(),
		leaseChildIdentity+"="+identity, leaseChildNames+"="+strings.Join(names, ","), leaseChildLease+"="+s.Lease.String())
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if line := sc.Text(); line == "paddock-lease-child: ready" {
				ready <- nil
				for sc.Scan() { // drain, so the child never blocks on its stdout
				}
				return
			} else if strings.HasPrefix(line, "paddock-lease-child: failed") {
				ready <- errors.New(line)
				return
			}
		}
		ready <- errors.New("the child ended before it was ready")
	}()
	select {
	case err = <-ready:
	case <-time.After(3 * time.Minute):
		err = errors.New("the child was not ready within 3 minutes")
	}
	_ = cmd.Process.Kill() // SIGKILL: no shutdown of any kind
	killed := time.Now()
	_ = cmd.Wait()
	require.NoError(t, err, "child: %s", stderr.String())
	return killed
}

// leaseChild is the child process's part: a runtime with the given
// identity creates the sandboxes, says it is ready, and waits to be
// killed.
func leaseChild(t *testing.T, s LeaseSetup) {
	lease, err := time.ParseDuration(os.Getenv(leaseChildLease))
	if err != nil {
		fmt.Println("paddock-lease-child: failed: lease:", err)
		return
	}
	a := s.Adapter(t)
	identity := os.Getenv(leaseChildIdentity)
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{a.Provider(): a}, Name: identity, Identity: identity, Lease: lease, ReapInterval: -1})
	if err != nil {
		fmt.Println("paddock-lease-child: failed: start:", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, n := range strings.Split(os.Getenv(leaseChildNames), ",") {
		if _, err := rt.Adapter(a.Provider()).Create(ctx, n, paddock.CreateOpts{}); err != nil {
			fmt.Println("paddock-lease-child: failed: create:", err)
			return
		}
	}
	fmt.Println("paddock-lease-child: ready")
	select {} // until killed
}

// randomSuffix is 8 random hex digits.
func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// RunMaxAge proves a's Reap destroys a sandbox past the maximum age a was
// configured with (maxAge, short), even under a live lease, and only
// then: a dry run first reports it and changes nothing.
func RunMaxAge(t *testing.T, a paddock.Adapter, maxAge time.Duration) {
	t.Helper()
	keeper, ok := a.(paddock.LeaseKeeper)
	require.True(t, ok, "the adapter keeps leases and lifetime bounds")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	name := "max-age-" + randomSuffix()
	live := paddock.Lease{Owner: "a-live-runtime", Until: time.Now().Add(time.Hour)}
	created := time.Now()
	h, err := a.Create(ctx, name, paddock.CreateOpts{Lease: live})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Destroy(context.Background(), h) })
	dry := func() paddock.ReapReport {
		r, err := paddock.Reap(ctx, keeper, paddock.ReapOpts{DryRun: true})
		require.NoError(t, err)
		return r
	}
	if r := dry(); time.Since(created) < maxAge {
		assert.NotContains(t, r.Destroyed, name, "not yet past its maximum age")
	}
	require.Eventually(t, func() bool { return slices.Contains(dry().Destroyed, name) }, 2*time.Minute, 50*time.Millisecond,
		"past its maximum age, a live lease does not save it")
	_, err = a.Get(ctx, h)
	require.NoError(t, err, "the dry run changed nothing")
	r, err := paddock.Reap(ctx, keeper, paddock.ReapOpts{})
	require.NoError(t, err)
	assert.Contains(t, r.Destroyed, name)
	assert.NotContains(t, r.Orphaned, name)
	_, err = a.Get(ctx, h)
	assert.ErrorIs(t, err, paddock.ErrNotFound)
}
