package e2b_test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b"
	"github.com/paddockhq/paddock/conformance"
)

// TestLive runs the conformance suite against the real E2B service with
// the key in E2B_API_KEY (E2B_BASE_URL, E2B_TEMPLATE and E2B_USER
// optional). It creates and kills sandboxes named paddock-live-<run>-<n>.
// The load case runs E2B_LOAD_TURNS turns at once (default 5: each turn's
// commands share one sandbox, and an account allows few at a time).
func TestLive(t *testing.T) {
	t.Parallel()
	key := os.Getenv("E2B_API_KEY")
	if key == "" {
		t.Skip("live E2B test skipped: set E2B_API_KEY (and optionally E2B_BASE_URL, E2B_TEMPLATE, E2B_USER, E2B_LOAD_TURNS) to run the conformance suite against the real service")
	}
	captured.Secret(key)
	turns := 5
	if v, err := strconv.Atoi(os.Getenv("E2B_LOAD_TURNS")); err == nil && v > 0 {
		turns = v
	}
	a := e2b.New(e2b.Config{APIKey: paddock.NewSecret(key), BaseURL: os.Getenv("E2B_BASE_URL"),
		Template: os.Getenv("E2B_TEMPLATE"), User: os.Getenv("E2B_USER"), Logger: testLogger()})
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
