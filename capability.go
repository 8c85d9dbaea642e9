package paddock

import (
	"encoding/json"
	"sort"
	"strings"
)

// Capability names an optional promise an adapter makes
// (docs/contract.md#capabilities). The set is closed.
type Capability string

// The closed set of capabilities.
const (
	CapSuspend               Capability = "suspend"                 // idle parking keeps the disk at negligible cost
	CapNetworkPolicy         Capability = "network_policy"          // a deny-capable egress policy can be applied
	CapCheckpoint            Capability = "checkpoint"              // checkpoints can be created, restored and listed now
	CapCreateCheckpointOnce  Capability = "create_checkpoint_once"  // bounded checkpoint creation tied to an operation id
	CapAttach                Capability = "attach"                  // detachable sessions with replay from byte zero
	CapTTY                   Capability = "tty"                     // PTY allocation on spawn
	CapPublicURL             Capability = "public_url"              // PublicURL returns a URL a browser can open
	CapTerminateSession      Capability = "terminate_session"       // provider-confirmed termination of one session
	CapForceTerminateSession Capability = "force_terminate_session" // the force mode of TerminateSession
	CapCreateNew             Capability = "create_new"              // one creation attempt that never adopts
	CapDestroyOnce           Capability = "destroy_once"            // one bounded deletion that confirms absence
	CapExpose                Capability = "expose"                  // a port exposed as a signed, expiring, revocable preview
	CapNamedSpawn            Capability = "named_spawn"             // a spawn named after a live session returns that session
	CapFiles                 Capability = "files"                   // list, stat, remove, rename and make directories
	CapSignal                Capability = "signal"                  // signals delivered to a live command
	CapResize                Capability = "resize"                  // a TTY's initial size and resizing it live
	CapWatch                 Capability = "watch"                   // a directory's changes as a stream of events
	CapFork                  Capability = "fork"                    // a new sandbox started from a checkpoint
)

// AllCapabilities returns the closed set, in the order above.
func AllCapabilities() []Capability {
	return []Capability{
		CapSuspend, CapNetworkPolicy, CapCheckpoint, CapCreateCheckpointOnce,
		CapAttach, CapTTY, CapPublicURL, CapTerminateSession,
		CapForceTerminateSession, CapCreateNew, CapDestroyOnce, CapExpose,
		CapNamedSpawn, CapFiles, CapSignal, CapResize, CapWatch, CapFork,
	}
}

// Known reports whether c belongs to the closed set.
func (c Capability) Known() bool {
	for _, k := range AllCapabilities() {
		if k == c {
			return true
		}
	}
	return false
}

// CapabilitySet is an immutable set of capabilities. The zero value is empty.
type CapabilitySet struct {
	m map[Capability]struct{}
}

// NewCapabilitySet returns the set of the given capabilities; duplicates
// collapse. Unknown names are kept so that Validate can reject them.
func NewCapabilitySet(caps ...Capability) CapabilitySet {
	m := make(map[Capability]struct{}, len(caps))
	for _, c := range caps {
		m[c] = struct{}{}
	}
	return CapabilitySet{m: m}
}

// Has reports whether c is in the set.
func (s CapabilitySet) Has(c Capability) bool {
	_, ok := s.m[c]
	return ok
}

// Len returns the number of capabilities in the set.
func (s CapabilitySet) Len() int { return len(s.m) }

// List returns the capabilities in sorted order.
func (s CapabilitySet) List() []Capability {
	out := make([]Capability, 0, len(s.m))
	for c := range s.m {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// With returns a new set holding s and caps.
func (s CapabilitySet) With(caps ...Capability) CapabilitySet {
	return NewCapabilitySet(append(s.List(), caps...)...)
}

// Without returns a new set holding s minus caps.
func (s CapabilitySet) Without(caps ...Capability) CapabilitySet {
	out := NewCapabilitySet(s.List()...)
	for _, c := range caps {
		delete(out.m, c)
	}
	return out
}

// Validate returns an *InvalidError naming every capability outside the
// closed set, or nil.
func (s CapabilitySet) Validate() error {
	var unknown []string
	for _, c := range s.List() {
		if !c.Known() {
			unknown = append(unknown, string(c))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	return &InvalidError{Detail: "unknown capabilities: " + strings.Join(unknown, ", ")}
}

// String lists the set as "{a, b}".
func (s CapabilitySet) String() string {
	names := make([]string, 0, len(s.m))
	for _, c := range s.List() {
		names = append(names, string(c))
	}
	return "{" + strings.Join(names, ", ") + "}"
}

// MarshalJSON encodes the set as a sorted array of names.
func (s CapabilitySet) MarshalJSON() ([]byte, error) { return json.Marshal(s.List()) }

// UnmarshalJSON decodes an array of names.
func (s *CapabilitySet) UnmarshalJSON(b []byte) error {
	var caps []Capability
	if err := json.Unmarshal(b, &caps); err != nil {
		return err
	}
	*s = NewCapabilitySet(caps...)
	return nil
}

// Supports reports whether a advertises c now. Capabilities may depend on
// configuration, so the adapter is asked on every call.
func Supports(a Adapter, c Capability) bool {
	return a != nil && a.Capabilities().Has(c)
}

// Require answers ErrNotSupported unless a advertises c right now: the gate
// of an operation that needs a capability.
func Require(a Adapter, c Capability) error {
	if !Supports(a, c) {
		return ErrNotSupported
	}
	return nil
}
