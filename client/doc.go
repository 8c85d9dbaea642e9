// Package client is the one implementation of paddock.Adapter, and of
// every optional interface, that drives a Paddock runtime: each call
// becomes its request of package messages and each stream the frames of a
// subscription, carried by a Transport. The runtime's own transport
// (actors.Runtime.Adapter) and the transport to another node
// (adapters/remote) are the two there are, so an operation written here
// once reaches every caller: Go code embedding a runtime, the demo, and
// the runtimes of other nodes.
//
// Errors are taxonomy errors wrapped once in *paddock.OpError with the
// operation and the provider, as the runtime answered them; a request
// whose reply never came is unavailable, its outcome unknown.
package client
