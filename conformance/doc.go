// Package conformance is the suite every Paddock adapter must pass, shipped
// as a library: an adapter's own test calls Run once, and each promise of
// the contract becomes a named subtest, so a failure points at exactly one
// promise. Cases gated by a capability check the promise when it is
// advertised and the refusal (not_supported, or ErrNoPublicURL for public
// URLs) when it is not; nothing passes silently.
//
// # Writing an adapter
//
// The reference to copy is package fake. An adapter for a new provider is
// a package adapters/<provider> that imports paddock (never the runtime),
// and a loopback server in adapters/<provider>/<provider>test that speaks the
// provider's real wire protocol, failure modes included, so the adapter is
// proven without a network. Then:
//
//  1. Identity. BuildHandle(name) is pure: {Provider(), name}, nothing else.
//     Every operation must work on such a handle, because hosts rebuild
//     handles from persistence; rebuild any connection state lazily from the
//     name. Keep credentials in Handle.Private or in the adapter, never in a
//     printed field.
//  2. Lifecycle. Create adopts an existing name and never answers
//     ErrAlreadyExists. Get answers ErrNotFound only for definite absence;
//     a 5xx or a timeout is *UnavailableError, because hosts give up a parked
//     disk on not_found. Destroy tolerates absence. ListAllNames is the
//     complete view or ErrTruncated.
//  3. Errors. Map every provider answer to the taxonomy where you read it:
//     404 not_found, 401/403 denied, 429 rate_limited (with the retry hint),
//     5xx unavailable, other 4xx and 3xx invalid, anything unclassifiable
//     *ProviderError. Never put a token or a bounded operation's body in an
//     error.
//  4. Exec. A nonzero exit is data. An error means the command could not run
//     or its fate is unknown; a stream that closed before its exit is
//     ErrClosedBeforeExit, never ok(partial, 0).
//  5. Streams. Spawn returns once stdin can be written. Next yields output in
//     order, then exactly one terminal event, then io.EOF for ever. A
//     transport that ends without an exit yields an EventError; an exit
//     already received wins over a later close. WriteStdin after the exit,
//     or after Close, is ErrCommandExited. Close detaches locally and never
//     kills the remote command. All of this holds under load: read a
//     command's output until its end, and never let a timer decide that
//     the output is complete (a busy machine schedules readers late). Case
//     24 runs Config.Load.Turns turns at once, each checking the exact
//     bytes of Exec and Spawn; lower the count for a live provider.
//  6. Sessions (capability attach). Attach replays from byte zero, keeping
//     stream identity and chunk boundaries (the first replayed chunk equals
//     the first chunk the original saw), then tails; a finished session
//     replays, then ends with its recorded exit or error. Replay and tail
//     must neither lose nor duplicate output at the seam.
//  7. Optional operations are the small interfaces of package paddock
//     (CreateNewer, SessionTerminator, Exposer, ...). Advertise a capability
//     exactly when the answer keeps its promise, and refuse what you do not
//     advertise with ErrNotSupported: a network policy is never silently
//     dropped, a session name never silently ignored.
//
// Then prove it:
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.Config{
//			Adapter:  myadapter.New(myadapter.WithBaseURL(srv.URL())),
//			Fixtures: conformance.ShellFixtures(),
//		})
//	}
//
// FakeFixtures is the fake's scripted vocabulary; ShellFixtures serves any
// adapter with a POSIX shell. Hosted providers need a longer FrameTimeout.
//
// The suite only uses the paddock.Adapter contract, so the same cases run
// against the actor runtime by handing Run an Adapter backed by it.
package conformance
