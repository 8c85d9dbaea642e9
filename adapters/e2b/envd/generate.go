// Package envd holds the project's description of envd's Process and
// Filesystem services (process.proto, filesystem.proto) and the Go code
// generated from it: processpb and filesystempb for the messages, their
// *connect subpackages for connect-go clients and handlers. The generated
// code is committed; CI regenerates it and fails on a difference.
package envd

//go:generate protoc --proto_path=. --go_out=. --go_opt=module=github.com/paddockhq/paddock/adapters/e2b/envd --connect-go_out=. --connect-go_opt=module=github.com/paddockhq/paddock/adapters/e2b/envd process.proto filesystem.proto
