package docker

import (
	"crypto/sha256"
	"encoding/hex"
)

// Labels hold everything a sandbox must remember: no registry exists
// beside the engine, so any process can manage any sandbox.
const (
	labelPrefix      = "dev.paddock."
	labelManaged     = labelPrefix + "managed"      // "true"
	labelName        = labelPrefix + "name"         // the caller's sandbox name
	labelCreatedAt   = labelPrefix + "created-at"   // RFC 3339 (nanoseconds), UTC
	labelIdleTimeout = labelPrefix + "idle-timeout" // Go duration; negative = none
	labelMaxAge      = labelPrefix + "max-age"      // Go duration; negative = none
	labelOwner       = labelPrefix + "owner"        // the creating runtime: its lease owner, or host/pid/start
	labelLeaseUntil  = labelPrefix + "lease-until"  // RFC 3339 (nanoseconds), UTC: the lease at creation
)

// containerPrefix starts every container name we make.
const containerPrefix = "paddock-"

// containerName derives a container name from a sandbox name:
// deterministic (the same name finds the same sandbox), opaque (caller
// names may say who a tenant is; container names are visible to anyone on
// the engine) and namespaced.
func containerName(sandbox string) string {
	sum := sha256.Sum256([]byte(sandbox))
	return containerPrefix + hex.EncodeToString(sum[:])[:32]
}
