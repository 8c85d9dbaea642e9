package spritestest_test

import (
	"os"
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
	env := []string{"SPRITES_TOKEN=" + srv.Token(), "SPRITES_URL=" + srv.URL(), "SPRITES_SERVER_ROOT=0"}
	if os.Geteuid() == 0 {
		env[2] = "SPRITES_SERVER_ROOT=1" // files are given away (chown) only by root
	}
	// The SDK uses Node's WebSocket, a flag's feature before Node 22.
	if exec.Command("node", "-e", "process.exit(typeof WebSocket === 'undefined' ? 1 : 0)").Run() != nil {
		env = append(env, "NODE_OPTIONS=--experimental-websocket")
	}
	nodesdk.Run(t, "testdata/jssdk", "@fly/sprites", "sdk.mjs", "delete", env...)
}
