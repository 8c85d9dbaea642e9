// Package clients holds Paddock's clients in other languages, each in its
// own directory with its README: typescript (Node.js, Connect) and python
// (asyncio, gRPC). Its Go tests build paddockd and run each client's tests
// against it; they skip, saying why, where a client's runtime or packages
// are not installed, and fail instead under CI (.ci/run installs them).
package clients
