package docker

import (
	"context"

	"github.com/paddockhq/paddock"
)

// ContainerName is the container of a sandbox.
func ContainerName(sandbox string) string { return containerName(sandbox) }

// ParseSessions reads scriptList's output.
var ParseSessions = parseSessions

// StopForTest stops a sandbox as the reaper's idle stop does.
func StopForTest(ctx context.Context, a *Adapter, name string) error {
	return a.StopIdle(ctx, paddock.SandboxFacts{Name: name, ID: containerName(name)})
}

// ForkThroughStdin makes a's forks stream their checkpoint through the
// exec's stdin, as with an engine on another machine.
func ForkThroughStdin(a *Adapter) { a.seedForks = false }
