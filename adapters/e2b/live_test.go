package e2b_test

import (
	"os"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/paddockhq/paddock/conformance"
)

// TestLive runs the conformance suite against the real E2B service with
// the key in E2B_API_KEY. It creates and kills sandboxes named
// paddock-live-<run>-<n>.
func TestLive(t *testing.T) {
	t.Parallel()
	conformance.RunLive(t, conformance.Live{
		Credential: "E2B_API_KEY", Optional: []string{"E2B_BASE_URL", "E2B_TEMPLATE", "E2B_USER"}, TurnsEnv: "E2B_LOAD_TURNS", Turns: 5,
		Adapter: func(key string) (paddock.Adapter, error) {
			return e2b.New(e2b.Config{APIKey: paddock.NewSecret(captured.Secret(key)), BaseURL: os.Getenv("E2B_BASE_URL"),
				Template: os.Getenv("E2B_TEMPLATE"), User: os.Getenv("E2B_USER"), Logger: testLogger()})
		},
		SpawnOptions: paddock.SpawnOpts{Detachable: true},
		Configure: func(c *conformance.Config) {
			c.Fixtures.SpawnDrop = conformance.WrapperDrop() // a command that kills its journal's wrapper
		},
	})
}
