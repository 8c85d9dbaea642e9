package daytona_test

import (
	"os"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/daytona"
	"github.com/paddockhq/paddock/adapters/internal/livetest"
	"github.com/paddockhq/paddock/conformance"
)

// TestLive runs the conformance suite against the real Daytona with the
// key in DAYTONA_API_KEY (DAYTONA_API_URL, DAYTONA_SNAPSHOT and
// DAYTONA_LOAD_TURNS optional). It creates and deletes sandboxes named
// paddock-live-<run>-<n>.
func TestLive(t *testing.T) {
	t.Parallel()
	key := os.Getenv("DAYTONA_API_KEY")
	if key == "" {
		t.Skip("live Daytona test skipped: set DAYTONA_API_KEY (and optionally DAYTONA_API_URL, DAYTONA_SNAPSHOT, DAYTONA_LOAD_TURNS) to run the conformance suite against the real service")
	}
	captured.Secret(key)
	a := daytona.New(daytona.Config{APIKey: paddock.NewSecret(key), APIURL: os.Getenv("DAYTONA_API_URL"),
		Snapshot: os.Getenv("DAYTONA_SNAPSHOT"), Logger: testLogger()})
	cfg := livetest.Config(a, "DAYTONA_LOAD_TURNS", 5, paddock.SpawnOpts{Detachable: true})
	cfg.Fixtures.SpawnDrop = conformance.WrapperDrop() // a command that kills the subshell recording its code
	conformance.Run(t, cfg)
}
