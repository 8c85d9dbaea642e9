package e2btest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOfficialJSSDK drives E2B's own JS SDK (testdata/jssdk: the e2b
// package at the version its lock file pins) against e2btest, unchanged:
// sandboxes, commands, stdin, files, the Filesystem service, a terminal,
// pause and connect. It needs node and `npm ci` in testdata/jssdk; it
// skips without them, and fails instead under CI (which installs both).
func TestOfficialJSSDK(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("testdata", "jssdk"))
	require.NoError(t, err)
	node, err := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "e2b"))
	if err != nil || modErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node (%v) or the SDK (%v) is missing: run npm ci in %s", err, modErr, dir)
		}
		t.Skipf("the official JS SDK test needs node and `npm ci` in %s", dir)
	}
	srv := e2btest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "sdk.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "E2B_API_KEY="+srv.Key(), "E2B_API_URL="+srv.URL(), "E2B_SANDBOX_URL="+srv.URL())
	out, err := cmd.CombinedOutput()
	t.Logf("the SDK's run:\n%s", out)
	require.NoError(t, err)
	assert.Contains(t, string(out), "ok kill")
	assert.NotContains(t, string(out), "FAIL")
	assert.Equal(t, strings.Count(string(out), "ok "), strings.Count(string(out), "\n"), "every step passed")
}
