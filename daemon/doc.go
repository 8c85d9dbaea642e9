// Package daemon serves a runtime's operations over the network, as the
// service Paddock of messages/service.proto (Connect, gRPC and gRPC-Web on
// one port, by connectrpc.com/connect), and is that service's Go client:
// Dial returns a client.Transport, so client.New(t, provider) is a
// paddock.Adapter whose every call travels to the server's runtime.
//
// Each RPC carries the actor protocol's own request and reply: a failure
// the runtime answers is inside the reply, as in process; an error of the
// service itself (a malformed message, the runtime unreachable) is a
// Connect error. Spawn, Attach and Watch stream their reply, then the
// subscription's frames; a client that stops reading holds the command
// back through HTTP/2's flow control and the runtime's credits, so the
// server holds at most its window of frames for it. Closing a stream
// detaches it: the command goes on where the provider keeps sessions.
package daemon
