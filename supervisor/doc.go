// Package supervisor holds what keeps Paddock's frame contract true whatever
// an adapter or the actor engine does: the recover middleware every runtime
// actor carries (a panic becomes a message, never a crashed process or a
// hollywood restart), the per-command frame Guard (seq from 1, exactly one
// terminal frame after all output, closed-before-exit, duplicate terminals
// dropped and reported), and the Watchdog, the library's only event-stream
// subscriber, which turns an owner actor's stop into a notice.
//
// It imports paddock and messages only; the runtime in package actors
// builds on it.
package supervisor
