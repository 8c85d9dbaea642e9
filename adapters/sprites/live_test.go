package sprites_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/livetest"
	"github.com/paddockhq/paddock/adapters/sprites"
	"github.com/paddockhq/paddock/conformance"
)

// TestLive runs the conformance suite against the real Sprites API with the
// token in SPRITES_TOKEN (and SPRITES_BASE_URL, if set). It creates and
// destroys sprites named paddock-live-<run>-<n>. SPRITES_CHECKPOINTS=1 also
// runs the checkpoint cases (they write checkpoints on those sprites). The
// load case runs SPRITES_LOAD_TURNS turns at once (default 10: each is a
// sprite of its own on the account).
func TestLive(t *testing.T) {
	t.Parallel()
	token := os.Getenv("SPRITES_TOKEN")
	if token == "" {
		t.Skip("live Sprites test skipped: set SPRITES_TOKEN (and optionally SPRITES_BASE_URL, SPRITES_CHECKPOINTS=1) to run the conformance suite against the real service")
	}
	captured.Secret(token)
	checkpoints, _ := strconv.ParseBool(os.Getenv("SPRITES_CHECKPOINTS"))
	a := sprites.New(sprites.Config{
		Token: paddock.NewSecret(token), BaseURL: os.Getenv("SPRITES_BASE_URL"),
		CheckpointCreation: checkpoints, Logger: testLogger(),
	})
	conformance.Run(t, livetest.Config(a, "SPRITES_LOAD_TURNS", liveLoadTurns, paddock.SpawnOpts{}))
}

// liveLoadTurns is the live load case's default concurrency.
const liveLoadTurns = 10
