// Package sprites is the Paddock adapter for Sprites (sprites.dev, by
// Fly.io): REST for lifecycle, files, policy, checkpoints and session
// management, and a WebSocket per command for exec, spawn and attach.
//
// Sprites parks idle machines on its own (warm, then cold), so Suspend only
// confirms the sprite exists and Resume is a probe; warm and cold report as
// suspended. Every spawn is a detachable session (max_run_after_disconnect
// 0: it runs until it ends), replayed from its scrollback on Attach.
// Finished sessions leave the provider's list at once and cannot be
// attached to.
//
// The bounded operations (CreateNew, DestroyOnce, CreateCheckpointOnce,
// TerminateSession) make exactly the requests the contract
// describes (docs/contract.md#bounded-sprites), within one deadline and a byte budget, with no retries and no
// redirects, and accept only the evidence it lists.
//
// The token travels only in the Authorization header of requests; it is
// never logged, never in an error, and never in a printed value. Package
// spritestest is a loopback server speaking the same protocol, failure modes
// included, for tests.
package sprites
