package sprites_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/sprites"
	"github.com/paddockhq/paddock/conformance"
)

// TestLive runs the conformance suite against the real Sprites API with the
// token in SPRITES_TOKEN. It creates and destroys sprites named
// paddock-live-<run>-<n>. SPRITES_CHECKPOINTS=1 also runs the checkpoint
// cases (they write checkpoints on those sprites).
func TestLive(t *testing.T) {
	t.Parallel()
	checkpoints, _ := strconv.ParseBool(os.Getenv("SPRITES_CHECKPOINTS"))
	conformance.RunLive(t, conformance.Live{
		Credential: "SPRITES_TOKEN", Optional: []string{"SPRITES_BASE_URL", "SPRITES_CHECKPOINTS=1"}, TurnsEnv: "SPRITES_LOAD_TURNS", Turns: 10,
		Adapter: func(token string) (paddock.Adapter, error) {
			return sprites.New(sprites.Config{Token: paddock.NewSecret(captured.Secret(token)), BaseURL: os.Getenv("SPRITES_BASE_URL"),
				CheckpointCreation: checkpoints, Logger: testLogger()})
		},
	})
}
