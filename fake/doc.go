// Package fake is Paddock's reference adapter: an in-memory world of
// sandboxes whose commands are scripts, each argument one instruction:
//
//	out:<data>   emit stdout          err:<data>   emit stderr
//	exit:<n>     exit with code n     stay         echo each stdin write as
//	drop         end with closed_before_exit      "echo:<data>" until EOF, then exit 0
//
// The command name is ignored, a script without exit, stay or drop exits 0
// after its last instruction, nothing after a terminal instruction runs, and
// an unknown instruction is refused with an *InvalidError. Exec evaluates a
// script without running it; Spawn runs it as a detachable session with
// replay, and TerminateSession stops one with exit 137.
//
// It is the model for new adapters (see package conformance) and the fastest
// test double. Each New is its own world, safe for parallel tests; Reset,
// Policy, File, SessionLive and PreviewValid let tests look inside.
package fake
