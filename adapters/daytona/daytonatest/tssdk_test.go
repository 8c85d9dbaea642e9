package daytonatest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOfficialTSSDK drives Daytona's own TypeScript SDK (testdata/tssdk:
// @daytonaio/sdk at the version its lock file pins) against daytonatest,
// unchanged: create, execute, sessions with followed logs, files, stop,
// start and delete. It needs node and `npm ci` in testdata/tssdk; it skips
// without them, and fails instead under CI (which installs both).
func TestOfficialTSSDK(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("testdata", "tssdk"))
	require.NoError(t, err)
	node, err := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "@daytonaio", "sdk"))
	if err != nil || modErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node (%v) or the SDK (%v) is missing: run npm ci in %s", err, modErr, dir)
		}
		t.Skipf("the official TypeScript SDK test needs node and `npm ci` in %s", dir)
	}
	srv := daytonatest.NewServer(t, daytonatest.WithFollowIdle(5))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "sdk.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DAYTONA_API_KEY="+srv.Key(), "DAYTONA_API_URL="+srv.APIURL())
	out, err := cmd.CombinedOutput()
	t.Logf("the SDK's run:\n%s", out)
	require.NoError(t, err)
	assert.Contains(t, string(out), "ok stop, start, delete")
	assert.NotContains(t, string(out), "FAIL")
	assert.Equal(t, strings.Count(string(out), "ok "), strings.Count(string(out), "\n"), "every step passed")
}
