// Package messages is Paddock's actor protocol: the frames a command actor
// sends its owner (Stdout, Stderr, Exit, Error), the Credit an owner grants
// back, and a request / reply pair for every contract operation, with errors
// carried as a taxonomy kind plus detail (Failure).
//
// Every message is a pointer to a protoc-gen-go type, so it can cross
// hollywood's remote layer unchanged. messages.pb.go is generated: edit
// messages.proto and run `go generate ./messages` (see the README), never
// the .pb.go file. This package imports nothing else of Paddock's.
package messages

//go:generate protoc --proto_path=. --go_out=. --go_opt=paths=source_relative messages.proto service.proto
