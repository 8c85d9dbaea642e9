//go:build linux

package local

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/procid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A start-up sweep removes only the cgroups of machines whose runtime is
// gone: a live runtime's machine is kept however long its cgroup was
// empty (its init not in yet), a dead one's is swept at once, and a name
// of an earlier version (no owner in it) is judged by its age.
func TestSweepTakesOnlyWhatIsGone(t *testing.T) {
	t.Parallel()
	now := time.Now()
	hourAgo := now.Add(-time.Hour)

	ours := machineCgroupName()
	require.True(t, strings.HasPrefix(ours, "m-"), ours)

	// A process that ran and is gone: its pid and start time, from a name
	// made while it lived.
	gone := exec.Command("sleep", "60")
	require.NoError(t, gone.Start())
	parts := strings.Split(procid.Of(gone.Process.Pid), "/")
	require.Len(t, parts, 3)
	require.NotEmpty(t, parts[2])
	require.NoError(t, gone.Process.Kill())
	_ = gone.Wait()

	for _, tc := range []struct {
		name    string
		modTime time.Time
		sweep   bool
		why     string
	}{
		{ours, hourAgo, false, "a live runtime's machine, empty for an hour (its init not in yet)"},
		{"m-" + parts[1] + "-" + parts[2] + "-0123456789abcdef", now, true, "a machine whose runtime is gone, however young"},
		{"m-0123456789abcdef", now, false, "an earlier version's name, younger than sweepAge"},
		{"m-0123456789abcdef", hourAgo, true, "an earlier version's name, older than sweepAge"},
		{"other", hourAgo, false, "not a machine's"},
	} {
		assert.Equal(t, tc.sweep, sweepable(tc.name, tc.modTime, now), tc.why)
	}
}
