package paddock

import "encoding/json"

// Status is the provider-neutral state of a sandbox: exactly one of running,
// suspended or unknown. Provider vocabulary never leaks into it.
type Status string

// The three statuses.
const (
	StatusRunning   Status = "running"
	StatusSuspended Status = "suspended"
	StatusUnknown   Status = "unknown"
)

// Info is Get's answer: the neutral Status and the provider's unparsed
// payload (JSON, possibly empty).
type Info struct {
	Status Status          `json:"status"`
	Raw    json.RawMessage `json:"raw,omitempty"`
}

// providerStates holds the observed state vocabularies of contract section 0.
var providerStates = map[Provider]map[string]Status{
	ProviderSprites: {
		"running": StatusRunning, "ready": StatusRunning, "active": StatusRunning,
		"suspended": StatusSuspended, "paused": StatusSuspended, "stopped": StatusSuspended,
	},
	ProviderE2B: {
		"running": StatusRunning, "paused": StatusSuspended,
	},
	ProviderDaytona: {
		"started": StatusRunning, "starting": StatusRunning, "resuming": StatusRunning,
		"stopped": StatusSuspended, "stopping": StatusSuspended, "archived": StatusSuspended,
		"archiving": StatusSuspended, "paused": StatusSuspended, "pausing": StatusSuspended,
	},
}

// StatusOf maps a provider's own state word to a Status using the mappings
// observed in contract section 0. Anything unrecognised, including every
// state of a provider without a table, is StatusUnknown.
func StatusOf(p Provider, state string) Status {
	if s, ok := providerStates[p][state]; ok {
		return s
	}
	return StatusUnknown
}
