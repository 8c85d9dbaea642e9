package paddock

import (
	"encoding/json"
	"time"
)

// Status is the provider-neutral state of a sandbox: exactly one of running,
// suspended or unknown. Provider vocabulary never leaks into it.
type Status string

// The three statuses.
const (
	StatusRunning   Status = "running"
	StatusSuspended Status = "suspended"
	StatusUnknown   Status = "unknown"
)

// Info is Get's answer: what a caller asks about a sandbox. A field the
// provider does not report is empty (each adapter's Get says which); Raw
// is the provider's own unparsed answer (JSON, possibly empty).
type Info struct {
	// Name is the sandbox's name, the key of Create.
	Name string `json:"name"`
	// ID is the provider's own id of this incarnation (a container id, a
	// sandbox id); "" where the provider has none.
	ID string `json:"id,omitempty"`
	// Image is what the sandbox runs: an image, a template or a snapshot.
	Image string `json:"image,omitempty"`
	// Status is the neutral state: running, suspended or unknown.
	Status Status `json:"status"`
	// CreatedAt is when the provider created the sandbox.
	CreatedAt time.Time       `json:"created_at,omitzero"`
	Raw       json.RawMessage `json:"raw,omitempty"`
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
