package paddock

import (
	"fmt"
	"log/slog"

	"github.com/rs/zerolog"
)

// Ref is the correlation key of one command subscription: fresh for every
// spawn and every attach, carried by every frame. It is comparable, so it can
// key a map.
type Ref string

// Command is a provider-tagged reference to one streaming command
// subscription (contract section 4). Provider selects the adapter for stdin
// and stop; Private belongs to whoever minted the command and is never
// printed, logged or encoded.
type Command struct {
	Provider Provider `json:"provider"`
	Ref      Ref      `json:"ref"`
	Private  any      `json:"-"`
}

// String returns "provider/ref".
func (c Command) String() string { return string(c.Provider) + "/" + string(c.Ref) }

// GoString returns a Go-syntax form without private state.
func (c Command) GoString() string {
	return fmt.Sprintf("paddock.Command{Provider:%q, Ref:%q}", string(c.Provider), string(c.Ref))
}

// Format prints the command for every fmt verb without private state.
func (c Command) Format(f fmt.State, verb rune) { formatSafe(f, verb, c.String(), c.GoString()) }

// MarshalZerologObject logs the provider and the ref.
func (c Command) MarshalZerologObject(e *zerolog.Event) {
	e.Str("provider", string(c.Provider)).Str("ref", string(c.Ref))
}

// LogValue logs the provider and the ref through log/slog.
func (c Command) LogValue() slog.Value {
	return slog.GroupValue(slog.String("provider", string(c.Provider)), slog.String("ref", string(c.Ref)))
}
