package docker

// ContainerName is the container of a sandbox.
func ContainerName(sandbox string) string { return containerName(sandbox) }

// ParseSessions reads scriptList's output.
var ParseSessions = parseSessions
