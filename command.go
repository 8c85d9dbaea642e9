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

// Subscription is a provider-tagged reference to one streaming command
// subscription (contract section 4). Provider selects the adapter for stdin
// and stop; Private belongs to whoever minted the subscription and is never
// printed, logged or encoded.
type Subscription struct {
	Provider Provider `json:"provider"`
	Ref      Ref      `json:"ref"`
	Private  any      `json:"-"`
}

// String returns "provider/ref".
func (c Subscription) String() string { return string(c.Provider) + "/" + string(c.Ref) }

// GoString returns a Go-syntax form without private state.
func (c Subscription) GoString() string {
	return fmt.Sprintf("paddock.Subscription{Provider:%q, Ref:%q}", string(c.Provider), string(c.Ref))
}

// Format prints the subscription for every fmt verb without private state.
func (c Subscription) Format(f fmt.State, verb rune) { formatSafe(f, verb, c.String(), c.GoString()) }

// MarshalZerologObject logs the provider and the ref.
func (c Subscription) MarshalZerologObject(e *zerolog.Event) {
	e.Str("provider", string(c.Provider)).Str("ref", string(c.Ref))
}

// LogValue logs the provider and the ref through log/slog.
func (c Subscription) LogValue() slog.Value {
	return slog.GroupValue(slog.String("provider", string(c.Provider)), slog.String("ref", string(c.Ref)))
}
