package paddock

import "sort"

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
