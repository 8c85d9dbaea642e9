// Package adaptertest is what the adapters' own test suites share: raw
// calls to a provider's API (caller.go), reading a stream in a test
// (streams.go), and the checks every suite repeats (checks.go).
package adaptertest
