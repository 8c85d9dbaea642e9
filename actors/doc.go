// Package actors is Paddock's runtime: every sandbox handle and every
// spawned command is a hollywood actor that owns its provider connection
// and streams typed frames (package messages) to an owner, under a root
// that keeps the frame contract whatever the adapter does.
//
// Start a runtime over a registry of adapters and call it from plain Go:
//
//	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderLocal: local}})
//	defer rt.Close()
//	a := rt.Adapter(paddock.ProviderLocal) // a paddock.Adapter, through the runtime's actors
//	h, err := a.Create(ctx, "agent-1", paddock.CreateOpts{})
//	res, err := a.Exec(ctx, h, paddock.NewCmd("sh", "-c", "echo hi"), paddock.ExecOpts{})
//	s, err := a.Spawn(ctx, h, cmd, paddock.SpawnOpts{Stdin: true}) // a *FrameStream: frames on C()
//
// or from actors: send any request of package messages to rt.PID(); the
// reply goes back to the sender and a command's frames to the owner named in
// the request (the sender when none is named).
//
// The guarantees, per subscription: frames arrive in order with seq 1, 2, 3,
// ...; exactly one terminal frame (Exit or Error) follows all output; a
// stream that closes without an exit is Error{closed_before_exit}, never a
// made-up exit 0; an adapter panic is Error{adapter_panic} and never crashes
// the process; Shutdown gives every live subscriber Error{stopped_before_exit}.
// A stopped owner actor is detached like StopCommand: the remote process
// keeps running and stays attachable.
//
// Flow control: a command sends at most a window of output frames (default
// 64) its owner has not credited, and reads no further from the provider
// until credit arrives. Plain-Go streams credit as their channel is read; an
// owner actor credits with Credits. An owner that never credits receives one
// window and no more.
//
// Actor tree (ids are deterministic, under the root paddock/<name>):
//
//	paddock/<name>                      root: routing, command table, owner watch
//	paddock/<name>/watchdog/0           the only event-stream subscriber
//	paddock/<name>/sandbox/<p>/<name>   one per sandbox: provider calls on goroutines
//	paddock/<name>/cmd/<ref>            one per spawn or attach: reader, writer, guard
//	paddock-stream/<id>                 names a plain-Go FrameStream as owner (no actor: frames go to its queue)
//
// Nothing blocks inside Receive, commands start on an explicit launch
// message (never in Started), every actor carries the recover middleware,
// and every goroutine is tracked and waited for by Shutdown.
package actors
