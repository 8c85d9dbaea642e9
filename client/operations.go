package client

import (
	"context"
	"io"
	"io/fs"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/wire"
	"github.com/paddockhq/paddock/messages"
)

// Each operation below encodes its request, sends it, and decodes its
// reply: the one place an operation is written on the calling side.

func (c *Client) Create(ctx context.Context, name string, opts paddock.CreateOpts) (paddock.Handle, error) {
	r, err := call[*messages.CreateReply](ctx, c, c.BuildHandle(name), &messages.CreateRequest{Provider: string(c.p), Name: name, Params: opts.Params})
	if err != nil {
		return paddock.Handle{}, err
	}
	return wire.HandleFromMessage(r.GetHandle()), nil
}

func (c *Client) CreateNew(ctx context.Context, name string, opts paddock.CreateNewOpts) (paddock.Handle, error) {
	r, err := call[*messages.CreateNewReply](ctx, c, c.BuildHandle(name), &messages.CreateNewRequest{Provider: string(c.p), Name: name,
		Timeout: wire.DurationMessage(opts.Timeout), WaitForCapacity: opts.WaitForCapacity})
	if err != nil {
		return paddock.Handle{}, err
	}
	return wire.HandleFromMessage(r.GetHandle()), nil
}

func (c *Client) Get(ctx context.Context, h paddock.Handle) (paddock.Info, error) {
	r, err := call[*messages.GetReply](ctx, c, h, &messages.GetRequest{Handle: wire.HandleMessage(h)})
	if err != nil {
		return paddock.Info{}, err
	}
	return wire.InfoFromMessage(r.GetInfo()), nil
}

func (c *Client) Destroy(ctx context.Context, h paddock.Handle) error {
	_, err := call[*messages.DestroyReply](ctx, c, h, &messages.DestroyRequest{Handle: wire.HandleMessage(h)})
	return err
}

func (c *Client) DestroyOnce(ctx context.Context, h paddock.Handle, opts paddock.DestroyOnceOpts) error {
	_, err := call[*messages.DestroyOnceReply](ctx, c, h, &messages.DestroyOnceRequest{Handle: wire.HandleMessage(h), Timeout: wire.DurationMessage(opts.Timeout)})
	return err
}

func (c *Client) ListAllNames(ctx context.Context) ([]string, error) {
	r, err := call[*messages.ListReply](ctx, c, c.BuildHandle(""), &messages.ListRequest{Provider: string(c.p)})
	if err != nil {
		return nil, err
	}
	return r.GetNames(), nil
}

func (c *Client) Suspend(ctx context.Context, h paddock.Handle) error {
	_, err := call[*messages.SuspendReply](ctx, c, h, &messages.SuspendRequest{Handle: wire.HandleMessage(h)})
	return err
}

func (c *Client) Resume(ctx context.Context, h paddock.Handle) (paddock.Handle, error) {
	r, err := call[*messages.ResumeReply](ctx, c, h, &messages.ResumeRequest{Handle: wire.HandleMessage(h)})
	if err != nil {
		return paddock.Handle{}, err
	}
	return wire.HandleFromMessage(r.GetHandle()), nil
}

// Exec runs cmd under the runtime's one deadline from opts.Timeout
// (docs/contract.md#exec-deadlines); the transport waits that much longer
// for the reply.
func (c *Client) Exec(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.ExecOpts) (paddock.ExecResult, error) {
	var hold time.Duration
	if opts.Timeout != nil {
		hold = *opts.Timeout
	}
	r, err := callHeld[*messages.ExecReply](ctx, c, h, wire.ExecRequestMessage("", h, cmd, opts), hold)
	if err != nil {
		return paddock.ExecResult{}, err
	}
	return wire.ExecResultFromMessage(r), nil
}

func (c *Client) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, opts paddock.SpawnOpts) (paddock.Stream, error) {
	return c.open(ctx, h, wire.SpawnRequestMessage(h, cmd, opts))
}

func (c *Client) Attach(ctx context.Context, h paddock.Handle, sessionID string, opts paddock.AttachOpts) (paddock.Stream, error) {
	return c.open(ctx, h, &messages.AttachRequest{Handle: wire.HandleMessage(h), SessionId: sessionID, Stdin: opts.Stdin})
}

// Watch starts a watch of one directory; its changes travel as frames of
// a subscription, like a command's output.
func (c *Client) Watch(ctx context.Context, h paddock.Handle, path string) (paddock.FileWatch, error) {
	st, err := c.open(ctx, h, &messages.WatchRequest{Handle: wire.HandleMessage(h), Path: path})
	if err != nil {
		return nil, err
	}
	return paddock.WatchOf(st), nil
}

// open sends a stream's request about h and answers its stream.
func (c *Client) open(ctx context.Context, h paddock.Handle, q Request) (paddock.Stream, error) {
	st, r, err := c.t.Open(ctx, q)
	if _, err := decode[Reply](h, q, r, err); err != nil {
		if st != nil {
			_ = st.Close()
		}
		return nil, err
	}
	return st, nil
}

func (c *Client) ListSessions(ctx context.Context, h paddock.Handle) ([]paddock.Session, error) {
	r, err := call[*messages.ListSessionsReply](ctx, c, h, &messages.ListSessionsRequest{Handle: wire.HandleMessage(h)})
	if err != nil {
		return nil, err
	}
	return wire.All(r.GetSessions(), wire.SessionFromMessage), nil
}

// TerminateSession validates first: a mode the wire cannot carry must
// never arrive as graceful.
func (c *Client) TerminateSession(ctx context.Context, h paddock.Handle, sessionID string, opts paddock.TerminateOpts) error {
	q := &messages.TerminateSessionRequest{Handle: wire.HandleMessage(h), SessionId: sessionID}
	opts, err := paddock.ValidateTermination(sessionID, opts)
	if err != nil {
		return wrap(h, q, err)
	}
	q.Timeout, q.Mode = wire.DurationMessage(opts.Timeout), wire.TerminateModeMessage(opts.Mode)
	_, err = call[*messages.TerminateSessionReply](ctx, c, h, q)
	return err
}

func (c *Client) ApplyNetworkPolicy(ctx context.Context, h paddock.Handle, p paddock.NetworkPolicy) error {
	_, err := call[*messages.ApplyNetworkPolicyReply](ctx, c, h, &messages.ApplyNetworkPolicyRequest{Handle: wire.HandleMessage(h), Allow: p.Allow})
	return err
}

func (c *Client) PublicURL(ctx context.Context, h paddock.Handle) (string, error) {
	r, err := call[*messages.PublicURLReply](ctx, c, h, &messages.PublicURLRequest{Handle: wire.HandleMessage(h)})
	return r.GetUrl(), err
}

func (c *Client) CreateCheckpoint(ctx context.Context, h paddock.Handle, opts paddock.CheckpointOpts) (string, error) {
	r, err := call[*messages.CreateCheckpointReply](ctx, c, h, &messages.CreateCheckpointRequest{Handle: wire.HandleMessage(h), Comment: opts.Comment})
	return r.GetCheckpointId(), err
}

func (c *Client) CreateCheckpointOnce(ctx context.Context, h paddock.Handle, opts paddock.CheckpointOnceOpts) (string, error) {
	r, err := call[*messages.CreateCheckpointOnceReply](ctx, c, h, &messages.CreateCheckpointOnceRequest{Handle: wire.HandleMessage(h),
		Timeout: wire.DurationMessage(opts.Timeout), OperationId: opts.OperationID})
	return r.GetCheckpointId(), err
}

func (c *Client) RestoreCheckpoint(ctx context.Context, h paddock.Handle, checkpointID string) error {
	_, err := call[*messages.RestoreCheckpointReply](ctx, c, h, &messages.RestoreCheckpointRequest{Handle: wire.HandleMessage(h), CheckpointId: checkpointID})
	return err
}

func (c *Client) ListCheckpoints(ctx context.Context, h paddock.Handle) ([]paddock.Checkpoint, error) {
	r, err := call[*messages.ListCheckpointsReply](ctx, c, h, &messages.ListCheckpointsRequest{Handle: wire.HandleMessage(h)})
	if err != nil {
		return nil, err
	}
	return wire.All(r.GetCheckpoints(), wire.CheckpointFromMessage), nil
}

func (c *Client) DeleteCheckpoint(ctx context.Context, h paddock.Handle, checkpointID string) error {
	_, err := call[*messages.DeleteCheckpointReply](ctx, c, h, &messages.DeleteCheckpointRequest{Handle: wire.HandleMessage(h), CheckpointId: checkpointID})
	return err
}

// Fork asks the runtime for the new sandbox name, made from a checkpoint
// of h's sandbox; the runtime holds its lease as it holds a created one's.
func (c *Client) Fork(ctx context.Context, h paddock.Handle, checkpointID, name string, _ paddock.ForkOpts) (paddock.Handle, error) {
	r, err := call[*messages.ForkReply](ctx, c, c.BuildHandle(name), &messages.ForkRequest{Provider: string(c.p), Name: name,
		Source: wire.HandleMessage(h), CheckpointId: checkpointID})
	if err != nil {
		return paddock.Handle{}, err
	}
	return wire.HandleFromMessage(r.GetHandle()), nil
}

// WriteFile streams r into path through the transport; the path is
// validated before anything is sent.
func (c *Client) WriteFile(ctx context.Context, h paddock.Handle, path string, mode fs.FileMode, r io.Reader) error {
	q := &messages.WriteFileRequest{Handle: wire.HandleMessage(h), Path: path, Mode: uint32(mode.Perm())}
	if err := paddock.ValidatePath(path); err != nil {
		return wrap(h, q, err)
	}
	reply, err := c.t.Upload(ctx, q, r)
	_, err = decode[*messages.WriteFileReply](h, q, reply, err)
	return err
}

// ReadFile streams the file at path through the transport; the path is
// validated before anything is sent.
func (c *Client) ReadFile(ctx context.Context, h paddock.Handle, path string) (io.ReadCloser, error) {
	q := &messages.ReadFileRequest{Handle: wire.HandleMessage(h), Path: path}
	if err := paddock.ValidatePath(path); err != nil {
		return nil, wrap(h, q, err)
	}
	rc, reply, err := c.t.Download(ctx, q)
	if _, err := decode[*messages.ReadFileReply](h, q, reply, err); err != nil {
		if rc != nil {
			_ = rc.Close()
		}
		return nil, err
	}
	return rc, nil
}

func (c *Client) ListDir(ctx context.Context, h paddock.Handle, path string) ([]paddock.FileInfo, error) {
	r, err := call[*messages.ListDirReply](ctx, c, h, &messages.ListDirRequest{Handle: wire.HandleMessage(h), Path: path})
	if err != nil {
		return nil, err
	}
	return wire.All(r.GetEntries(), wire.FileInfoFromMessage), nil
}

func (c *Client) Stat(ctx context.Context, h paddock.Handle, path string) (paddock.FileInfo, error) {
	r, err := call[*messages.StatReply](ctx, c, h, &messages.StatRequest{Handle: wire.HandleMessage(h), Path: path})
	if err != nil {
		return paddock.FileInfo{}, err
	}
	return wire.FileInfoFromMessage(r.GetInfo()), nil
}

func (c *Client) Remove(ctx context.Context, h paddock.Handle, path string, opts paddock.RemoveOpts) error {
	_, err := call[*messages.RemoveReply](ctx, c, h, &messages.RemoveRequest{Handle: wire.HandleMessage(h), Path: path, Recursive: opts.Recursive})
	return err
}

func (c *Client) Rename(ctx context.Context, h paddock.Handle, from, to string) error {
	_, err := call[*messages.RenameReply](ctx, c, h, &messages.RenameRequest{Handle: wire.HandleMessage(h), From: from, To: to})
	return err
}

func (c *Client) MakeDir(ctx context.Context, h paddock.Handle, path string, opts paddock.MakeDirOpts) error {
	_, err := call[*messages.MakeDirReply](ctx, c, h, &messages.MakeDirRequest{Handle: wire.HandleMessage(h), Path: path,
		Parents: opts.Parents, Mode: uint32(opts.Mode.Perm())})
	return err
}

func (c *Client) Expose(ctx context.Context, h paddock.Handle, port int, opts paddock.ExposeOpts) (paddock.Preview, error) {
	r, err := call[*messages.ExposeReply](ctx, c, h, &messages.ExposeRequest{Handle: wire.HandleMessage(h), Port: int32(port), Ttl: wire.DurationMessage(&opts.TTL)})
	if err != nil {
		return paddock.Preview{}, err
	}
	return wire.PreviewFromMessage(r.GetPreview()), nil
}

func (c *Client) Revoke(ctx context.Context, h paddock.Handle, p paddock.Preview) error {
	_, err := call[*messages.RevokeReply](ctx, c, h, &messages.RevokeRequest{Handle: wire.HandleMessage(h), Preview: wire.PreviewMessage(p)})
	return err
}
