// Package remote puts a Paddock runtime's engine on the network, for
// owners and runtimes on other machines, speaking hollywood's remote wire
// protocol (its drpc service and batches) through a listener and links of
// its own (docs/contract.md#remote). Two rules hold on every node: peers
// authenticate each other with mutual TLS (a node without a certificate
// from the configured authority can neither send a request nor receive a
// frame), and only messages of package messages cross the wire, either
// way. Adapter drives another node's sandboxes with exact streams: it is
// package client's one implementation of the contract over a transport of
// links between nodes.
package remote
