package e2btest_test

import (
	"testing"

	"github.com/paddockhq/paddock/adapters/e2b/e2btest"
	"github.com/paddockhq/paddock/adapters/internal/nodesdk"
)

// TestOfficialJSSDK drives E2B's own JS SDK (testdata/jssdk: the e2b
// package at the version its lock file pins) against e2btest, unchanged:
// sandboxes, commands, stdin, files, the Filesystem service, a terminal,
// pause and connect. It needs node and `npm ci` in testdata/jssdk.
func TestOfficialJSSDK(t *testing.T) {
	t.Parallel()
	srv := e2btest.NewServer(t)
	nodesdk.Run(t, "testdata/jssdk", "e2b", "sdk.mjs", "kill",
		"E2B_API_KEY="+srv.Key(), "E2B_API_URL="+srv.URL(), "E2B_SANDBOX_URL="+srv.URL(), "E2B_VOLUME_API_URL="+srv.URL())
}
