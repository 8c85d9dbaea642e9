package e2b_test

import (
	"os"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/paddockhq/paddock/adapters/internal/livetest"
	"github.com/paddockhq/paddock/conformance"
)

// TestLive runs the conformance suite against the real E2B service with
// the key in E2B_API_KEY (E2B_BASE_URL, E2B_TEMPLATE and E2B_USER
// optional). It creates and kills sandboxes named paddock-live-<run>-<n>.
// The load case runs E2B_LOAD_TURNS turns at once (default 5: an account
// allows few sandboxes at a time).
func TestLive(t *testing.T) {
	t.Parallel()
	key := os.Getenv("E2B_API_KEY")
	if key == "" {
		t.Skip("live E2B test skipped: set E2B_API_KEY (and optionally E2B_BASE_URL, E2B_TEMPLATE, E2B_USER, E2B_LOAD_TURNS) to run the conformance suite against the real service")
	}
	captured.Secret(key)
	a := e2b.New(e2b.Config{APIKey: paddock.NewSecret(key), BaseURL: os.Getenv("E2B_BASE_URL"),
		Template: os.Getenv("E2B_TEMPLATE"), User: os.Getenv("E2B_USER"), Logger: testLogger()})
	cfg := livetest.Config(a, "E2B_LOAD_TURNS", 5, paddock.SpawnOpts{Detachable: true})
	cfg.Fixtures.SpawnDrop = conformance.WrapperDrop() // a command that kills its journal's wrapper
	conformance.Run(t, cfg)
}
