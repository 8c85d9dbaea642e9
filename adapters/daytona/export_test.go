package daytona

import "github.com/paddockhq/paddock"

// SpawnScript is the wrapper a spawn of cmd runs in its session.
func SpawnScript(cmd paddock.Cmd, stdin bool) string {
	return spawnScript(display(cmd), commandLine(cmd), stdin)
}
