package actors

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
)

// stopTimeout bounds the StopCommand a Stream's Close makes.
const stopTimeout = 5 * time.Second

// reply is what every reply message has.
type reply interface {
	proto.Message
	GetFailure() *messages.Failure
}

// adapter looks a provider up for the calls that need no actor, wrapping
// the loud unknown-provider error.
func (rt *Runtime) adapter(op string, p paddock.Provider, name string) (paddock.Adapter, error) {
	a, err := rt.cfg.Adapters.Lookup(p)
	if err != nil {
		return nil, &paddock.OpError{Op: op, Provider: p, Name: name, Err: err}
	}
	return a, nil
}

// BuildHandle returns the handle of name on provider p, without I/O.
func (rt *Runtime) BuildHandle(p paddock.Provider, name string) (paddock.Handle, error) {
	a, err := rt.adapter("build_handle", p, name)
	if err != nil {
		return paddock.Handle{}, err
	}
	return a.BuildHandle(name), nil
}

// Capabilities returns what provider p's adapter advertises now.
func (rt *Runtime) Capabilities(p paddock.Provider) (paddock.CapabilitySet, error) {
	a, err := rt.adapter("capabilities", p, "")
	if err != nil {
		return paddock.CapabilitySet{}, err
	}
	return a.Capabilities(), nil
}

// Supports reports whether provider p's adapter advertises c now.
func (rt *Runtime) Supports(p paddock.Provider, c paddock.Capability) (bool, error) {
	a, err := rt.adapter("supports", p, "")
	if err != nil {
		return false, err
	}
	return paddock.Supports(a, c), nil
}

// HostPath maps an in-sandbox path as the handle's adapter sees it.
func (rt *Runtime) HostPath(h paddock.Handle, path string) (string, error) {
	a, err := rt.adapter("host_path", h.Provider, h.Name)
	if err != nil {
		return "", err
	}
	return paddock.HostPath(a, h, path), nil
}

// Create makes (or adopts) the sandbox called name on provider p.
func (rt *Runtime) Create(ctx context.Context, p paddock.Provider, name string, opts paddock.CreateOpts) (paddock.Handle, error) {
	r, err := invoke(ctx, rt, opCreate, p, name, &messages.CreateRequest{Provider: string(p), Name: name, Params: opts.Params})
	if err != nil {
		return paddock.Handle{}, err
	}
	return wire.HandleFromMessage(r.GetHandle()), nil
}

// CreateNew makes one creation attempt that never adopts; ErrNotSupported
// where the adapter has none.
func (rt *Runtime) CreateNew(ctx context.Context, p paddock.Provider, name string, opts paddock.CreateNewOpts) (paddock.Handle, error) {
	r, err := invoke(ctx, rt, opCreateNew, p, name, &messages.CreateNewRequest{Provider: string(p), Name: name,
		Timeout: wire.DurationMessage(opts.Timeout), WaitForCapacity: opts.WaitForCapacity})
	if err != nil {
		return paddock.Handle{}, err
	}
	return wire.HandleFromMessage(r.GetHandle()), nil
}

// Get reports the sandbox's status; ErrNotFound only for definite absence.
func (rt *Runtime) Get(ctx context.Context, h paddock.Handle) (paddock.Info, error) {
	r, err := invoke(ctx, rt, opGet, h.Provider, h.Name, &messages.GetRequest{Handle: wire.HandleMessage(h)})
	if err != nil {
		return paddock.Info{}, err
	}
	return wire.InfoFromMessage(r.GetInfo()), nil
}

// Destroy removes the sandbox; an absent one is fine.
func (rt *Runtime) Destroy(ctx context.Context, h paddock.Handle) error {
	_, err := invoke(ctx, rt, opDestroy, h.Provider, h.Name, &messages.DestroyRequest{Handle: wire.HandleMessage(h)})
	return err
}

// DestroyOnce makes one bounded deletion attempt; ErrNotSupported where the
// adapter has none.
func (rt *Runtime) DestroyOnce(ctx context.Context, h paddock.Handle, opts paddock.DestroyOnceOpts) error {
	_, err := invoke(ctx, rt, opDestroyOnce, h.Provider, h.Name, &messages.DestroyOnceRequest{Handle: wire.HandleMessage(h), Timeout: wire.DurationMessage(opts.Timeout)})
	return err
}

// ListAllNames returns every sandbox name of provider p, or ErrTruncated.
func (rt *Runtime) ListAllNames(ctx context.Context, p paddock.Provider) ([]string, error) {
	r, err := invoke(ctx, rt, opList, p, "", &messages.ListRequest{Provider: string(p)})
	return r.GetNames(), err
}

// Suspend parks the sandbox.
func (rt *Runtime) Suspend(ctx context.Context, h paddock.Handle) error {
	_, err := invoke(ctx, rt, opSuspend, h.Provider, h.Name, &messages.SuspendRequest{Handle: wire.HandleMessage(h)})
	return err
}

// Resume wakes the sandbox and returns a usable handle.
func (rt *Runtime) Resume(ctx context.Context, h paddock.Handle) (paddock.Handle, error) {
	r, err := invoke(ctx, rt, opResume, h.Provider, h.Name, &messages.ResumeRequest{Handle: wire.HandleMessage(h)})
	if err != nil {
		return paddock.Handle{}, err
	}
	return wire.HandleFromMessage(r.GetHandle()), nil
}

// Exec runs the adapter's Exec under the runtime's guard and one
// monotonic deadline from opts.Timeout (docs/contract.md#exec-deadlines),
// checked before dispatch and after the result; the error reports the
// original timeout. A nonzero exit is data.
func (rt *Runtime) Exec(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.ExecOpts) (paddock.ExecResult, error) {
	r, err := invoke(ctx, rt, opExec, h.Provider, h.Name, wire.ExecRequestMessage("", h, cmd, opts))
	if err != nil {
		return paddock.ExecResult{}, err
	}
	return wire.ExecResultFromMessage(r), nil
}

// Spawn starts cmd and returns a plain-Go Stream of its frames.
func (rt *Runtime) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts) (*FrameStream, error) {
	s := rt.newFrameStream()
	c, session, err := rt.SpawnTo(ctx, s.sink.owner, h, cmd, opts, 0)
	if err != nil {
		s.release()
		return nil, err
	}
	s.sub, s.sessionID = c, session
	return s, nil
}

// SpawnTo starts cmd with owner as the recipient of its frames, with window
// output frames in flight before owner must grant credit (0 = the
// runtime's window; see Credits). It returns the command and its session
// id.
func (rt *Runtime) SpawnTo(ctx context.Context, owner *actor.PID, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts, window int) (paddock.Subscription, string, error) {
	r, err := invoke(ctx, rt, opSpawn, h.Provider, h.Name, &messages.SpawnRequest{Handle: wire.HandleMessage(h), Cmd: wire.CmdMessage(cmd),
		Owner: messages.PidOf(owner), Stdin: opts.Stdin, Tty: opts.TTY, Detachable: opts.Detachable,
		SessionName: opts.Name, Window: uint32(max(window, 0)), Size: wire.TermSizeMessage(opts.Size)})
	if err != nil {
		return paddock.Subscription{}, "", err
	}
	return wire.CommandFromMessage(r.GetCommand()), r.GetSessionId(), nil
}

// Attach rejoins a session with a plain-Go Stream: its output from byte
// zero, then live output or its recorded end.
func (rt *Runtime) Attach(ctx context.Context, h paddock.Handle, sessionID string, opts paddock.AttachOpts) (*FrameStream, error) {
	s := rt.newFrameStream()
	c, err := rt.AttachTo(ctx, s.sink.owner, h, sessionID, opts, 0)
	if err != nil {
		s.release()
		return nil, err
	}
	s.sub, s.sessionID = c, sessionID
	return s, nil
}

// AttachTo rejoins a session with owner as the recipient of its frames.
func (rt *Runtime) AttachTo(ctx context.Context, owner *actor.PID, h paddock.Handle, sessionID string, opts paddock.AttachOpts, window int) (paddock.Subscription, error) {
	r, err := invoke(ctx, rt, opAttach, h.Provider, h.Name, &messages.AttachRequest{Handle: wire.HandleMessage(h), SessionId: sessionID,
		Owner: messages.PidOf(owner), Stdin: opts.Stdin, Window: uint32(max(window, 0))})
	if err != nil {
		return paddock.Subscription{}, err
	}
	return wire.CommandFromMessage(r.GetCommand()), nil
}

// Watch starts a watch of one directory; its changes arrive on the
// stream's channel as *messages.FileChange frames, and it ends with an
// Error frame or Close (docs/contract.md#op-watch).
func (rt *Runtime) Watch(ctx context.Context, h paddock.Handle, path string) (*FrameStream, error) {
	s := rt.newFrameStream()
	c, err := rt.WatchTo(ctx, s.sink.owner, h, path, 0)
	if err != nil {
		s.release()
		return nil, err
	}
	s.sub = c
	return s, nil
}

// WatchTo starts a watch with owner as the recipient of its frames.
func (rt *Runtime) WatchTo(ctx context.Context, owner *actor.PID, h paddock.Handle, path string, window int) (paddock.Subscription, error) {
	r, err := invoke(ctx, rt, opWatch, h.Provider, h.Name, &messages.WatchRequest{Handle: wire.HandleMessage(h), Path: path,
		Owner: messages.PidOf(owner), Window: uint32(max(window, 0))})
	if err != nil {
		return paddock.Subscription{}, err
	}
	return wire.CommandFromMessage(r.GetCommand()), nil
}

// WriteStdin writes p to the command's stdin, in order with other writes;
// ErrCommandExited after its exit or after StopCommand.
func (rt *Runtime) WriteStdin(ctx context.Context, c paddock.Subscription, p []byte) error {
	data := bytes.Clone(p) // the caller may reuse p once we return, even on a timeout
	_, err := invoke(ctx, rt, opWriteStdin, c.Provider, "", &messages.WriteStdinRequest{Command: wire.CommandMessage(c), Data: data})
	return err
}

// Signal delivers sig to the live command, in order with its stdin
// requests; ErrCommandExited after its exit or a StopCommand.
func (rt *Runtime) Signal(ctx context.Context, c paddock.Subscription, sig paddock.Signal) error {
	_, err := invoke(ctx, rt, opSignal, c.Provider, "", &messages.SignalRequest{Command: wire.CommandMessage(c), Signal: string(sig)})
	return err
}

// Resize sets the live TTY command's terminal size; ErrCommandExited after
// its exit or a StopCommand.
func (rt *Runtime) Resize(ctx context.Context, c paddock.Subscription, size paddock.TermSize) error {
	_, err := invoke(ctx, rt, opResize, c.Provider, "", &messages.ResizeRequest{Command: wire.CommandMessage(c), Size: wire.TermSizeMessage(&size)})
	return err
}

// CloseStdin sends EOF to the command's stdin; ok after its exit,
// ErrCommandExited after StopCommand.
func (rt *Runtime) CloseStdin(ctx context.Context, c paddock.Subscription) error {
	_, err := invoke(ctx, rt, opCloseStdin, c.Provider, "", &messages.CloseStdinRequest{Command: wire.CommandMessage(c)})
	return err
}

// StopCommand detaches this subscription locally; the remote command keeps
// running and stays attachable. It succeeds for any command, repeatedly.
func (rt *Runtime) StopCommand(ctx context.Context, c paddock.Subscription) error {
	_, err := invoke(ctx, rt, opStopCommand, c.Provider, "", &messages.StopCommandRequest{Command: wire.CommandMessage(c)})
	return err
}

// ListSessions lists the sandbox's sessions, finished ones included.
func (rt *Runtime) ListSessions(ctx context.Context, h paddock.Handle) ([]paddock.Session, error) {
	r, err := invoke(ctx, rt, opListSessions, h.Provider, h.Name, &messages.ListSessionsRequest{Handle: wire.HandleMessage(h)})
	if err != nil {
		return nil, err
	}
	return wire.All(r.GetSessions(), wire.SessionFromMessage), nil
}

// TerminateSession stops one session, with the facade's order of checks;
// the request is validated before it is encoded (an unknown mode has no
// wire form, and must never arrive as graceful).
func (rt *Runtime) TerminateSession(ctx context.Context, h paddock.Handle, sessionID string, opts paddock.TerminateOpts) error {
	opts, err := paddock.ValidateTermination(sessionID, opts)
	if err != nil {
		return opTerminateSession.opError(h.Provider, h.Name, err)
	}
	_, err = invoke(ctx, rt, opTerminateSession, h.Provider, h.Name, &messages.TerminateSessionRequest{Handle: wire.HandleMessage(h), SessionId: sessionID,
		Timeout: wire.DurationMessage(opts.Timeout), Mode: wire.TerminateModeMessage(opts.Mode)})
	return err
}

// ApplyNetworkPolicy applies the complete egress policy; an empty allow
// list denies all egress.
func (rt *Runtime) ApplyNetworkPolicy(ctx context.Context, h paddock.Handle, p paddock.NetworkPolicy) error {
	_, err := invoke(ctx, rt, opApplyNetworkPolicy, h.Provider, h.Name, &messages.ApplyNetworkPolicyRequest{Handle: wire.HandleMessage(h), Allow: p.Allow})
	return err
}

// PublicURL returns the sandbox's URL, or paddock.ErrNoPublicURL.
func (rt *Runtime) PublicURL(ctx context.Context, h paddock.Handle) (string, error) {
	r, err := invoke(ctx, rt, opPublicURL, h.Provider, h.Name, &messages.PublicURLRequest{Handle: wire.HandleMessage(h)})
	return r.GetUrl(), err
}

// CreateCheckpoint saves the sandbox; ErrNotSupported without CapCheckpoint.
func (rt *Runtime) CreateCheckpoint(ctx context.Context, h paddock.Handle, opts paddock.CheckpointOpts) (string, error) {
	r, err := invoke(ctx, rt, opCreateCheckpoint, h.Provider, h.Name, &messages.CreateCheckpointRequest{Handle: wire.HandleMessage(h), Comment: opts.Comment})
	return r.GetCheckpointId(), err
}

// CreateCheckpointOnce makes one bounded checkpoint tied to an operation id.
func (rt *Runtime) CreateCheckpointOnce(ctx context.Context, h paddock.Handle, opts paddock.CheckpointOnceOpts) (string, error) {
	r, err := invoke(ctx, rt, opCreateCheckpointOnce, h.Provider, h.Name, &messages.CreateCheckpointOnceRequest{Handle: wire.HandleMessage(h),
		Timeout: wire.DurationMessage(opts.Timeout), OperationId: opts.OperationID})
	return r.GetCheckpointId(), err
}

// RestoreCheckpoint restores a checkpoint.
func (rt *Runtime) RestoreCheckpoint(ctx context.Context, h paddock.Handle, checkpointID string) error {
	_, err := invoke(ctx, rt, opRestoreCheckpoint, h.Provider, h.Name, &messages.RestoreCheckpointRequest{Handle: wire.HandleMessage(h), CheckpointId: checkpointID})
	return err
}

// ListCheckpoints lists the sandbox's checkpoints.
func (rt *Runtime) ListCheckpoints(ctx context.Context, h paddock.Handle) ([]paddock.Checkpoint, error) {
	r, err := invoke(ctx, rt, opListCheckpoints, h.Provider, h.Name, &messages.ListCheckpointsRequest{Handle: wire.HandleMessage(h)})
	if err != nil {
		return nil, err
	}
	return wire.All(r.GetCheckpoints(), wire.CheckpointFromMessage), nil
}

// ListDir lists a directory of the sandbox.
func (rt *Runtime) ListDir(ctx context.Context, h paddock.Handle, path string) ([]paddock.FileInfo, error) {
	r, err := invoke(ctx, rt, opListDir, h.Provider, h.Name, &messages.ListDirRequest{Handle: wire.HandleMessage(h), Path: path})
	if err != nil {
		return nil, err
	}
	return wire.All(r.GetEntries(), wire.FileInfoFromMessage), nil
}

// Stat describes one file of the sandbox.
func (rt *Runtime) Stat(ctx context.Context, h paddock.Handle, path string) (paddock.FileInfo, error) {
	r, err := invoke(ctx, rt, opStat, h.Provider, h.Name, &messages.StatRequest{Handle: wire.HandleMessage(h), Path: path})
	if err != nil {
		return paddock.FileInfo{}, err
	}
	return wire.FileInfoFromMessage(r.GetInfo()), nil
}

// Remove removes a file or directory of the sandbox.
func (rt *Runtime) Remove(ctx context.Context, h paddock.Handle, path string, opts paddock.RemoveOpts) error {
	_, err := invoke(ctx, rt, opRemove, h.Provider, h.Name, &messages.RemoveRequest{Handle: wire.HandleMessage(h), Path: path, Recursive: opts.Recursive})
	return err
}

// Rename moves a file or directory of the sandbox.
func (rt *Runtime) Rename(ctx context.Context, h paddock.Handle, from, to string) error {
	_, err := invoke(ctx, rt, opRename, h.Provider, h.Name, &messages.RenameRequest{Handle: wire.HandleMessage(h), From: from, To: to})
	return err
}

// MakeDir makes a directory in the sandbox.
func (rt *Runtime) MakeDir(ctx context.Context, h paddock.Handle, path string, opts paddock.MakeDirOpts) error {
	_, err := invoke(ctx, rt, opMakeDir, h.Provider, h.Name, &messages.MakeDirRequest{Handle: wire.HandleMessage(h), Path: path, Parents: opts.Parents, Mode: uint32(opts.Mode.Perm())})
	return err
}

// Expose makes a port reachable as a signed, expiring preview.
func (rt *Runtime) Expose(ctx context.Context, h paddock.Handle, port int, opts paddock.ExposeOpts) (paddock.Preview, error) {
	r, err := invoke(ctx, rt, opExpose, h.Provider, h.Name, &messages.ExposeRequest{Handle: wire.HandleMessage(h), Port: int32(port), Ttl: wire.DurationMessage(&opts.TTL)})
	if err != nil {
		return paddock.Preview{}, err
	}
	return wire.PreviewFromMessage(r.GetPreview()), nil
}

// Revoke ends a preview early.
func (rt *Runtime) Revoke(ctx context.Context, h paddock.Handle, p paddock.Preview) error {
	_, err := invoke(ctx, rt, opRevoke, h.Provider, h.Name, &messages.RevokeRequest{Handle: wire.HandleMessage(h), Preview: wire.PreviewMessage(p)})
	return err
}

// WriteFile streams r into path, creating parent directories. Files go
// straight to the adapter from the caller's goroutine, so any size streams
// through without being held in memory (an actor sending WriteFileRequest
// carries the bytes in the message instead).
func (rt *Runtime) WriteFile(ctx context.Context, h paddock.Handle, path string, mode fs.FileMode, r io.Reader) error {
	a, err := rt.adapter(opWriteFile.name(), h.Provider, h.Name)
	if err != nil {
		return err
	}
	if err := paddock.ValidatePath(path); err != nil {
		return opWriteFile.opError(h.Provider, h.Name, err)
	}
	if err := recovered(func() error { return a.WriteFile(ctx, h, path, mode, r) }); err != nil {
		return opWriteFile.opError(h.Provider, h.Name, err)
	}
	return nil
}

// ReadFile streams the file at path from the adapter.
func (rt *Runtime) ReadFile(ctx context.Context, h paddock.Handle, path string) (io.ReadCloser, error) {
	a, err := rt.adapter(opReadFile.name(), h.Provider, h.Name)
	if err != nil {
		return nil, err
	}
	if err := paddock.ValidatePath(path); err != nil {
		return nil, opReadFile.opError(h.Provider, h.Name, err)
	}
	var rc io.ReadCloser
	err = recovered(func() (err error) { rc, err = a.ReadFile(ctx, h, path); return err })
	if err != nil {
		return nil, opReadFile.opError(h.Provider, h.Name, err)
	}
	return recoveringReader{rc}, nil
}
