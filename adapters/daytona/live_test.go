package daytona_test

import (
	"os"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/daytona"
	"github.com/paddockhq/paddock/conformance"
)

// TestLive runs the conformance suite against the real Daytona with the
// key in DAYTONA_API_KEY. It creates and deletes sandboxes named
// paddock-live-<run>-<n>.
func TestLive(t *testing.T) {
	t.Parallel()
	conformance.RunLive(t, conformance.Live{
		Credential: "DAYTONA_API_KEY", Optional: []string{"DAYTONA_API_URL", "DAYTONA_SNAPSHOT"}, TurnsEnv: "DAYTONA_LOAD_TURNS", Turns: 5,
		Adapter: func(key string) (paddock.Adapter, error) {
			return daytona.New(daytona.Config{APIKey: paddock.NewSecret(captured.Secret(key)), APIURL: os.Getenv("DAYTONA_API_URL"),
				Snapshot: os.Getenv("DAYTONA_SNAPSHOT"), Logger: testLogger()})
		},
		SpawnOptions: paddock.SpawnOpts{Detachable: true},
		Configure: func(c *conformance.Config) {
			c.Fixtures.SpawnDrop = conformance.WrapperDrop() // a command that kills the subshell recording its code
		},
	})
}
