package paddock

import (
	"fmt"
	"log/slog"

	"github.com/rs/zerolog"
)

// Handle is a provider-tagged reference to one sandbox (contract section 4).
// Provider selects the adapter; Name is the identity key. InstanceID is opaque
// provider metadata set only by CreateNew; hosts persist it with their intent
// because it cannot be rebuilt from the name. Private belongs to the adapter
// (a client holding a token, say) and may be nil: every operation works on a
// handle rebuilt with BuildHandle.
//
// Printing a Handle in any form (fmt verbs, JSON, zerolog, slog) shows only
// its provider and name, plus the instance id in JSON; never Private.
type Handle struct {
	Provider   Provider `json:"provider"`
	Name       string   `json:"name"`
	InstanceID string   `json:"instance_id,omitempty"`
	Private    any      `json:"-"`
}

// String returns "provider/name".
func (h Handle) String() string { return string(h.Provider) + "/" + h.Name }

// GoString returns a Go-syntax form without private state.
func (h Handle) GoString() string {
	return fmt.Sprintf("paddock.Handle{Provider:%q, Name:%q}", string(h.Provider), h.Name)
}

// Format prints the handle for every fmt verb without private state.
func (h Handle) Format(f fmt.State, verb rune) { formatSafe(f, verb, h.String(), h.GoString()) }

// MarshalZerologObject logs the provider and the name.
func (h Handle) MarshalZerologObject(e *zerolog.Event) {
	e.Str("provider", string(h.Provider)).Str("name", h.Name)
}

// LogValue logs the provider and the name through log/slog.
func (h Handle) LogValue() slog.Value {
	return slog.GroupValue(slog.String("provider", string(h.Provider)), slog.String("name", h.Name))
}

// formatSafe writes s for %v, %+v and %s, gos for %#v and a quoted s for %q.
func formatSafe(f fmt.State, verb rune, s, gos string) {
	switch {
	case verb == 'v' && f.Flag('#'):
		fmt.Fprint(f, gos)
	case verb == 'q':
		fmt.Fprintf(f, "%q", s)
	default:
		fmt.Fprint(f, s)
	}
}
