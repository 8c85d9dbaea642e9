// Package paddock states the sandbox contract in Go: one vocabulary for every
// place an agent's machine can live (Sprites, E2B, Daytona, a local Docker
// engine, host processes). The contract itself, in words, is
// docs/contract.md in this repository.
//
// Adapter authors implement Adapter (the required operations) and those of
// the small optional interfaces of adapter.go they can honour, advertise a
// CapabilitySet, and answer every failure with an error of the closed
// taxonomy (errors.go): a kind sentinel such as ErrNotFound, or a typed error
// such as *UnavailableError whose Is method matches its kind. The conformance
// package proves an adapter right.
//
// Callers use the actor runtime (package actors), or, with an adapter in
// hand, the facade helpers of adapter.go (CreateNew, ApplyNetworkPolicy,
// TerminateSession, ...). Both dispatch on the provider tag of a Handle or
// Subscription, validate every input before any provider access (the
// Validate functions and each option type's Validate method), never fall
// back from an optional operation to a required one, and keep the frame
// contract: output in order, then exactly one terminal frame.
//
// Values that may hold secrets never print them: Handle and Subscription
// show only provider and name or ref, Cmd hides env values, and Secret shows
// "[redacted]" in every form.
//
// This package holds no mutable package-level state and imports nothing of
// Paddock's; configuration, clocks and loggers arrive as values.
package paddock
