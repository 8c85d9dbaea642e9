package daytonatest_test

import (
	"strconv"
	"testing"

	"github.com/paddockhq/paddock/adapters/daytona/daytonatest"
	"github.com/paddockhq/paddock/adapters/internal/nodesdk"
)

// TestOfficialTSSDK drives Daytona's own TypeScript SDK (testdata/tssdk:
// @daytonaio/sdk at the version its lock file pins) against daytonatest,
// unchanged: create, execute, sessions with followed logs, files, stop,
// start and delete. It needs node and `npm ci` in testdata/tssdk.
func TestOfficialTSSDK(t *testing.T) {
	t.Parallel()
	srv := daytonatest.NewServer(t, daytonatest.WithFollowIdle(5))
	nodesdk.Run(t, "testdata/tssdk", "@daytonaio/sdk", "sdk.mjs", "stop, start, delete",
		"DAYTONA_API_KEY="+srv.Key(), "DAYTONA_API_URL="+srv.APIURL(), "DAYTONA_MAPPED="+strconv.FormatBool(srv.Mapped()))
}
