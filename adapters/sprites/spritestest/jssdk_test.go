package spritestest_test

import (
	"os/exec"
	"testing"

	"github.com/paddockhq/paddock/adapters/internal/nodesdk"
	"github.com/paddockhq/paddock/adapters/sprites/spritestest"
)

// Sprites' official JS SDK (@fly/sprites) drives every operation
// spritestest offers, step by step (testdata/jssdk/sdk.mjs).
func TestOfficialJSSDK(t *testing.T) {
	t.Parallel()
	srv := spritestest.NewServer(t)
	env := []string{"SPRITES_TOKEN=" + srv.Token(), "SPRITES_URL=" + srv.URL()}
	// The SDK uses Node's WebSocket, a flag's feature before Node 22.
	if exec.Command("node", "-e", "process.exit(typeof WebSocket === 'undefined' ? 1 : 0)").Run() != nil {
		env = append(env, "NODE_OPTIONS=--experimental-websocket")
	}
	nodesdk.Run(t, "testdata/jssdk", "@fly/sprites", "sdk.mjs", "delete", env...)
}
