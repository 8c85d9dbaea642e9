package actors

import (
	"context"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
)

// stopTimeout bounds the StopCommand a FrameStream's Close makes.
const stopTimeout = 5 * time.Second

// The runtime's own calls for streams owned by an actor: the frames go to
// owner, which grants credit (see Credits), with window output frames in
// flight before it must (0 = the runtime's window). Everything else goes
// through Adapter.

// SpawnTo starts cmd with owner as the recipient of its frames and returns
// the subscription and its session id.
func (rt *Runtime) SpawnTo(ctx context.Context, owner *actor.PID, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts, window int) (paddock.Subscription, string, error) {
	q := wire.SpawnRequestMessage(h, cmd, opts)
	q.Owner, q.Window = messages.PidOf(owner), uint32(max(window, 0))
	r, err := client.Send[*messages.SpawnReply](ctx, rt.Transport(), h, q)
	if err != nil {
		return paddock.Subscription{}, "", err
	}
	return wire.CommandFromMessage(r.GetCommand()), r.GetSessionId(), nil
}

// AttachTo rejoins a session with owner as the recipient of its frames.
func (rt *Runtime) AttachTo(ctx context.Context, owner *actor.PID, h paddock.Handle, sessionID string, opts paddock.AttachOpts, window int) (paddock.Subscription, error) {
	q := &messages.AttachRequest{Handle: wire.HandleMessage(h), SessionId: sessionID, Owner: messages.PidOf(owner), Stdin: opts.Stdin, Window: uint32(max(window, 0))}
	r, err := client.Send[*messages.AttachReply](ctx, rt.Transport(), h, q)
	if err != nil {
		return paddock.Subscription{}, err
	}
	return wire.CommandFromMessage(r.GetCommand()), nil
}

// WatchTo starts a watch with owner as the recipient of its frames.
func (rt *Runtime) WatchTo(ctx context.Context, owner *actor.PID, h paddock.Handle, path string, window int) (paddock.Subscription, error) {
	q := &messages.WatchRequest{Handle: wire.HandleMessage(h), Path: path, Owner: messages.PidOf(owner), Window: uint32(max(window, 0))}
	r, err := client.Send[*messages.WatchReply](ctx, rt.Transport(), h, q)
	if err != nil {
		return paddock.Subscription{}, err
	}
	return wire.CommandFromMessage(r.GetCommand()), nil
}

// Controls are the stdin, signals, resizes and local detach of a
// subscription SpawnTo, AttachTo or WatchTo started, as plain-Go calls.
func (rt *Runtime) Controls(sub paddock.Subscription) client.Controls {
	ref := wire.CommandMessage(sub)
	return client.Controls{T: rt.Transport(), Ref: func(context.Context) (*messages.CommandRef, error) { return ref, nil }}
}
