package docker

import "github.com/paddockhq/paddock/internal/procid"

// SelfOwner is the owner label this process puts on its sandboxes.
func SelfOwner() string { return procid.Self() }

// ContainerName is the container of a sandbox.
func ContainerName(sandbox string) string { return containerName(sandbox) }
