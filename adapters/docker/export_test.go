package docker

// SelfOwner is the owner label this process puts on its sandboxes.
func SelfOwner() string { return selfOwner() }

// ContainerName is the container of a sandbox.
func ContainerName(sandbox string) string { return containerName(sandbox) }
