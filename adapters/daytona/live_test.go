package daytona_test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/daytona"
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
	turns := 5
	if v, err := strconv.Atoi(os.Getenv("DAYTONA_LOAD_TURNS")); err == nil && v > 0 {
		turns = v
	}
	a := daytona.New(daytona.Config{APIKey: paddock.NewSecret(key), APIURL: os.Getenv("DAYTONA_API_URL"),
		Snapshot: os.Getenv("DAYTONA_SNAPSHOT"), Logger: testLogger()})
	run := make([]byte, 3)
	_, _ = rand.Read(run)
	var n atomic.Int64
	conformance.Run(t, conformance.Config{
		Adapter:  a,
		Fixtures: conformance.ShellFixtures(),
		Name: func() string {
			return "paddock-live-" + hex.EncodeToString(run) + "-" + strconv.FormatInt(n.Add(1), 10)
		},
		SpawnOptions:     paddock.SpawnOpts{Detachable: true},
		FrameTimeout:     60 * time.Second,
		OperationTimeout: 3 * time.Minute,
		Load:             conformance.Load{Turns: turns, Timeout: 15 * time.Minute},
	})
}
