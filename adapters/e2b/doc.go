// Package e2b is the Paddock adapter for E2B: the control-plane REST API
// for sandboxes (create, list, get, kill, timeout, pause, connect, network)
// and envd, the daemon inside each sandbox, for processes (connect-go over
// its Connect protocol) and files (its /files endpoints). A sandbox is
// found by name through its metadata, never by a cached id. Detachable
// spawns run under a journal wrapper inside the sandbox, so an attach
// replays from byte zero and recovers the real exit code; a wrapper killed
// itself (not its command) ends the stream closed_before_exit, since the
// command's fate is then unknown.
//
// A checkpoint is an E2B snapshot (checkpoints.go): files and memory,
// kept by E2B beyond the sandbox. E2B restores nothing in place, so a
// restore makes a new sandbox from the snapshot under the same name and
// kills the old one; a fork makes one under a new name.
//
//	a := e2b.New(e2b.Config{APIKey: paddock.NewSecret(os.Getenv("E2B_API_KEY"))})
//
// Package e2btest is a loopback E2B (both planes) for tests.
package e2b
