package paddock

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/rs/zerolog"
)

// Handle is a provider-tagged reference to one sandbox (docs/contract.md#values).
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

// ValidateSandboxName answers an *InvalidError with detail sandbox_name
// unless name can key a sandbox: 1 to 256 bytes, no NUL, no '/', and not
// "." or "..".
func ValidateSandboxName(name string) error {
	bad := name == "" || len(name) > 256 || name == "." || name == ".." || strings.ContainsAny(name, "/\x00")
	if bad {
		return &InvalidError{Detail: DetailSandboxName}
	}
	return nil
}

// Provider identifies a sandbox backend. It is the tag on every Handle and
// Subscription that selects the adapter serving it.
type Provider string

// Providers shipped with Paddock. A host may register others.
const (
	ProviderSprites Provider = "sprites"
	ProviderE2B     Provider = "e2b"
	ProviderDaytona Provider = "daytona"
	ProviderDocker  Provider = "docker"
	ProviderLocal   Provider = "local"
	ProviderFake    Provider = "fake"
)

// Registry maps each provider to the adapter that serves it. A host builds
// the whole map; nothing is merged with a default. It is a value: there is no
// package-level registry.
type Registry map[Provider]Adapter

// Lookup returns the adapter registered under p, or an
// *UnknownProviderError naming p and the configured set.
func (r Registry) Lookup(p Provider) (Adapter, error) {
	if a, ok := r[p]; ok && a != nil {
		return a, nil
	}
	return nil, &UnknownProviderError{Provider: p, Configured: r.Providers()}
}

// Providers returns the registered providers in sorted order.
func (r Registry) Providers() []Provider {
	out := make([]Provider, 0, len(r))
	for p, a := range r {
		if a != nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Supports answers whether the adapter registered under p advertises c right
// now; an unregistered p is an *UnknownProviderError.
func (r Registry) Supports(p Provider, c Capability) (bool, error) {
	a, err := r.Lookup(p)
	if err != nil {
		return false, err
	}
	return Supports(a, c), nil
}
