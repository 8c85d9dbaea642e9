package conformance

import (
	"context"
	"testing"

	"github.com/paddockhq/paddock/internal/heavy"
	"github.com/stretchr/testify/require"
)

// 24. Many agent turns at once lose nothing: every Exec and Spawn returns
// exactly its command's bytes and one terminal event, and every sandbox is
// gone afterwards. The case holds the machine's heavy lock while it runs,
// so the load cases of test binaries running at once take turns instead of
// starving each other.
func nothingLostUnderLoad(t testing.TB, s *suite) {
	f := s.cfg.Fixtures
	require.False(t, f.ExecBulk.Cmd.Path == "" || f.SpawnBulk.Cmd.Path == "",
		"the load case needs Fixtures.ExecBulk and Fixtures.SpawnBulk")
	heavy.Lock(t)
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Load.Timeout)
	defer cancel()
	a := s.a
	if s.cfg.loadAdapter != nil {
		a = s.cfg.loadAdapter
	}
	report := RunLoad(ctx, a, f, s.cfg.SpawnOptions, s.cfg.Load.Turns, s.name)
	t.Logf("load: %s", report)
	require.Zero(t, report.Failed, "turns went wrong: %s", report)
	require.Empty(t, report.LeftBehind, "sandboxes left behind: %s", report)
}
